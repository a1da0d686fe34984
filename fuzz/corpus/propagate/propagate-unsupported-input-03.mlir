#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
func.func @main() {
  return
}
}
