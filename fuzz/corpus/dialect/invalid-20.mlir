module attributes {dist.mesh = 4 : i64} {
}
