module "b" {
  source = "./loop_b.hcl"
}
