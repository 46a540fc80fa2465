"""The build side: front end (typing, sites, rewriting), the core passes, and the
driver that takes a module from source to a cached artifact. The runtime never
imports this package; `compiler.cached` is the one entry point, and it loads the
rest only on a cache miss."""
