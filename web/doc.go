// Package web renders the marketplace people browse: templ pages, their view
// models, README sanitizing, the plain-words permissions list, and the
// embedded static files (one hand-written CSS file and a small copy-button
// script) served at content-hashed URLs.
//
// The package knows nothing about HTTP routing, echo or the database: the
// server fills the view models and renders the returned templ.Component into
// a buffer. Every page works without JavaScript.
package web
