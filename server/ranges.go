package server

import (
	"net/http"
	"strings"
)

// maxRanges is the most byte ranges one answer of serveContent gives (package downloads,
// documents, feeds, previews). A client resuming or fetching in parts asks for one range, or
// a few; a 64 KiB header can hold thousands of one-byte ranges, each a seek and a read of
// the body — on an S3 bucket one ranged GET each, for a document a part of a multipart
// answer — for a few bytes sent. Over it the Range header is ignored and the whole body answered,
// as net/http itself does for ranges that add up to more than the file.
const maxRanges = 16

// dropExcessRanges removes a Range header asking for more than maxRanges ranges, and one
// in a unit other than bytes (items=0-1): RFC 9110 §14.2 has a server ignore a range unit
// it does not know and answer the whole body, where http.ServeContent would answer 416.
func dropExcessRanges(r *http.Request) {
	h := r.Header.Get("Range")
	if h == "" {
		return
	}
	if strings.Count(h, ",") >= maxRanges || !strings.HasPrefix(h, "bytes=") {
		r.Header.Del("Range")
	}
}
