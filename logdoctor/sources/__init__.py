"""Where lines come from: local files (plain or gzip), stdin, and SSH. Bytes in, numbered lines out;
nothing here knows a log format (the keywords to prefilter on are handed in by the caller)."""
