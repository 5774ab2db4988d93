experiment "../../../x" { # ERROR: Invalid experiment name
}
