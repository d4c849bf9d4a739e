"""Process plumbing: failpoints, the log file, sockets in private directories, logind."""
