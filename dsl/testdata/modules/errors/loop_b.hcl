module "a" {
  source = "./loop_a.hcl" # ERROR: The module files include each other in a loop: testdata/modules/errors/loop_a.hcl -> testdata/modules/errors/loop_b.hcl -> testdata/modules/errors/loop_a.hcl.
}
