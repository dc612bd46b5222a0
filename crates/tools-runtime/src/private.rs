//! Support for the code the macros generate. Not public API: names here may change in any
//! release.
