package main

// Temporary: pins every planned dependency in go.mod/go.sum while packages are written in parallel.
import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/PuerkitoBio/goquery"
	_ "github.com/a-h/templ"
	_ "github.com/chromedp/chromedp"
	_ "github.com/coreos/go-oidc/v3/oidc"
	_ "github.com/go-jose/go-jose/v4"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/klauspost/compress/gzip"
	_ "github.com/labstack/echo/v4"
	_ "github.com/microcosm-cc/bluemonday"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/sigstore/sigstore-go/pkg/bundle"
	_ "github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	_ "github.com/sigstore/sigstore-go/pkg/root"
	_ "github.com/sigstore/sigstore-go/pkg/testing/ca"
	_ "github.com/sigstore/sigstore-go/pkg/verify"
	_ "github.com/yuin/goldmark"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)

func main() {}
