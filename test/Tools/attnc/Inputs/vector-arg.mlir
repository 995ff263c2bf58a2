func.func @f(%x: vector<4xf32>) -> vector<4xf32> {
  return %x : vector<4xf32>
}
