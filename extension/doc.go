// Package extension reads and checks Curupira trigger extensions: the
// curupira-extension.toml manifest (format 1, Parse) and the behaviour of a running
// extension on the wire (protocol version 2, Conformance).
//
// Conformance decisions where the protocol page leaves room:
//
//   - The message shapes are those of package rpc (the one place they are written down).
//   - Offering another protocol major (3) is done in a fresh process, since an extension
//     may rightly refuse a second initialize; it must answer error -32001.
//   - The oversized-frame check also uses a fresh process: it sends MaxFrame+1 bytes holding
//     a valid request, and passes when the extension answers with any error or closes its
//     stdout; answering the request, or neither within the timeout, fails.
//   - A line on stdout that is not a frame fails stdout-frames-only and is skipped, so the
//     other checks still run; newline-delimited JSON or a newline after a frame fails framing
//     and makes the remaining checks of that process SKIP.
//   - trigger/validate and trigger/poll get Config.Tables, or a table built from the
//     trigger's schema (defaults, then examples, const, enum or a typed value for required
//     properties). Poll is only judged on a table that trigger/validate accepted.
//   - shutdown must be answered, then the process must exit with status 0 within the
//     timeout while its stdin is still open.
package extension
