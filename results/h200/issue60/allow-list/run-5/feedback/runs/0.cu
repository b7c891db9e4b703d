this is not CUDA
