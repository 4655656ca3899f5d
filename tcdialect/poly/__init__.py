"""The polyhedral layer (islpy): `scop` turns affine IR into the isl model
(domains, accesses, original schedule) and computes dependences; the
scheduler built on it comes later. Import from the submodules (islpy loads
only when they are used)."""
