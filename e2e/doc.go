// Package e2e holds the end-to-end browser tests of the marketplace pages: they start one
// registry on 127.0.0.1 with the bundled examples published, and drive Debian's chromium
// through chromedp to search, filter, open a plugin, read its permissions, copy its install
// URL, and check the pages on phone-size viewports (375 and 390 px), with the keyboard (Tab
// order and visible focus on search and the plugin page), for text contrast, and with
// axe-core on every page type in the light and dark colour schemes (a serious or critical
// violation fails).
//
// axe-core comes from npm, pinned by package-lock.json here: run `npm ci --prefix e2e`
// at the repository root. The tests skip when chromium or axe-core is absent, and fail
// instead when CI=true. Set CHROMIUM_PATH to use another binary, and ARTIFACTS_DIR to
// choose where the screenshots go (by default artifacts/e2e at the repository root, which
// git ignores).
package e2e
