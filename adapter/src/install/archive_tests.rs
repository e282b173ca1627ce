//! Archive validation tests on real ZIP files.
