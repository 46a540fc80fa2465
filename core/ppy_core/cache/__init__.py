"""The on-disk compile cache: one root, one build lock, atomic entries, the keys
that address them, and why a lookup missed. Modules: `store` (the Cache), `files`,
`lock`, `explain`, `keys` (fingerprints, key hashing), `module_key` (one module's key)."""
