//! Installer tests over a real loopback HTTP server and real ZIP archives.
