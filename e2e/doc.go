// Package e2e holds the end-to-end browser tests of the marketplace pages: they start one
// registry on 127.0.0.1 with the bundled examples published, and drive Debian's chromium
// through chromedp to search, filter, open a plugin, read its permissions, copy its install
// URL, and check the pages on a phone-size viewport, with the keyboard, and for text
// contrast in the light and dark colour schemes.
//
// The tests skip when chromium is absent, and fail instead when CI=true. Set CHROMIUM_PATH
// to use another binary, and ARTIFACTS_DIR to choose where the screenshots go (by default
// artifacts/e2e at the repository root, which git ignores).
package e2e
