// The `file` module (`prelude.md` §12): handles to local, content-addressed blobs in the cache
// folder's `blobs/`, produced by MCP binary content.

@"The bytes of the file as standard base64 with padding, all at once."
primitive agent read_base64(value: file) -> string

@"The recorded MIME type of the file, or the empty string."
primitive agent content_type(value: file) -> string

@"The size of the file in bytes."
primitive agent size(value: file) -> integer

@"The absolute local path of the file's bytes."
primitive agent path(value: file) -> string
