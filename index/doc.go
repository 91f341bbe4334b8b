// Package index owns the registry's two host-facing artefacts: the curated registry list
// (plugins.yaml: which repositories may publish which plugin ids and extensions, with their
// curation and signing policy) and the index documents that hosts fetch (Kandev's
// /index.json and Curupira's /curupira/index.json).
//
// The list is decoded strictly through yaml.Node, so that every problem carries the line and
// column where it was found. Its problem paths all have one shape:
//
//	plugins[3].previews[0].url (line 12, column 9)
//
// that is, a field path, a space, and the position in parentheses; a problem about the whole
// document has the position alone ("line 1, column 1"). Position splits such a path back.
//
// The documents are built from plain input structs (Snapshot), not from the store or the
// manifest types, so that this package depends on nothing but the problem package, yaml.v3
// and the standard library, and so that the bytes are stable for equal input. CheckKandev
// applies the checks a Kandev host applies when it reads a document (CheckCurupira the
// equivalent for Curupira); their problem paths are JSON field paths such as
// "plugins[2].previews[0].url", without a position.
package index
