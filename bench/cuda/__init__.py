"""GPU benchmark of tcdialect against PyTorch eager and torch.compile.

`python -m bench.cuda` (`make bench-gpu`) times TC's benchmark kernels (tmm,
tbmm, the four group convolutions, Kronecker3, MLP1, MLP3, Moments2, group
normalization, the 1LUT embedding bag) and softmax, layernorm, row sums,
max pooling, an elementwise chain, matmul, an MLP layer and a convolution at
sizes above the L2, on one CUDA GPU: ours (`tcdialect.define(...,
target="cuda")` on torch tensors), PyTorch eager and `torch.compile`, GPU
time from CUDA events with the L2 flushed before every timed call, next to a
roofline bound from the copy bandwidth and SGEMM rate measured in the same
run, every result checked against a float64 reference. It writes
`bench/RESULTS-cuda.md` (and the raw state as JSON) after every kernel,
within a wall-clock budget, and survives a crashing or hanging kernel.

Modules:

* `kernels`: the kernel table (TC source, float64 reference, torch peer,
  sizes, flops and bytes); no torch needed.
* `budget`: each kernel's share of the budget, compile or not, sample sizes.
* `state`: the run's JSON state, saved atomically.
* `device`: torch on the device: inputs, references, flush, event timing,
  limits, the error metric.
* `worker`: the process that measures kernels into the state.
* `cli`: the command line and the supervisor that runs workers.
* `report`: the Markdown report, from the state alone.
* `validate`: host-only checks of the table at tiny sizes (`--validate`).
"""
