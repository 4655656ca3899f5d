"""Testing helpers: `tcgen`, a seeded random TC program generator with a reducer."""
