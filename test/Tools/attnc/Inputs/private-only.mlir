func.func private @f() {
  return
}
