// Package tmpl is the language of a webhook's template
// (hooks.<name>.template in agnx.yaml): Parse reads a template, which
// config validation does when agnx.yaml is loaded, and Template.Render
// turns a delivery's JSON body (ParseBody) into the message the hook
// sends. The language is tiny on purpose, and rendering is bounded by the
// template's size whatever the body holds (template.go says how).
//
// It imports only the standard library: both lite/config and lite/hooks
// use it, so it sits below them both.
package tmpl
