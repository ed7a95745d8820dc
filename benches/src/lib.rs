//! Cross-crate and comparison benchmarks. The per-crate benches live under each crate's `benches/`;
//! this package holds the ones that span layers or compare seglog with other implementations.
