experiment "x" {
}

stage "t" {
	uses = "data.sentencs"
}
