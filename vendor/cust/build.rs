fn main() {
    find_cuda_helper::include_cuda();
}
