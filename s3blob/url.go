package s3blob

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// DefaultEndpoint is the endpoint of a blob URL that names none: Amazon S3.
const DefaultEndpoint = "s3.amazonaws.com"

// Config is a parsed blob URL:
//
//	s3://BUCKET?endpoint=HOST[:PORT]&region=REGION&insecure=1&prefix=PATH
//
// Every parameter is optional. endpoint defaults to Amazon S3; region, when absent, is asked
// of the bucket once; insecure=1 (or true) speaks plain HTTP instead of HTTPS; prefix puts
// every object under PATH/ (segments of letters, digits and "._-", joined by "/").
// Credentials never appear in the URL: they come from the environment.
type Config struct {
	Bucket   string
	Endpoint string
	Region   string
	Secure   bool
	Prefix   string
}

// params are the query parameters a blob URL may carry, each with what it means.
var params = map[string]string{
	"endpoint": "HOST[:PORT] of the S3 API",
	"region":   "the bucket's region",
	"insecure": "1 to speak plain HTTP",
	"prefix":   "a folder for the objects",
}

// ParseURL parses a blob URL; its errors name the part at fault and the fix.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, fmt.Errorf("s3blob: blob URL: %w (want s3://BUCKET?endpoint=HOST:PORT)", err)
	}
	shown := u.Redacted()
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("s3blob: blob URL %s: "+format, append([]any{shown}, args...)...)
	}
	switch {
	case u.Scheme != "s3":
		return bad("scheme %q: want s3://BUCKET?endpoint=HOST:PORT", u.Scheme)
	case u.User != nil:
		return bad("credentials in the URL: remove them and set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	case u.Path != "" && u.Path != "/":
		return bad("path %q after the bucket: put a folder in prefix=%s instead", u.Path, strings.Trim(u.Path, "/"))
	case u.Fragment != "":
		return bad("fragment #%s: remove it", u.Fragment)
	}
	if err := s3utils.CheckValidBucketNameStrict(u.Host); err != nil {
		return bad("bucket %q: %v (3 to 63 lowercase letters, digits, '.' and '-')", u.Host, err)
	}
	cfg := Config{Bucket: u.Host, Endpoint: DefaultEndpoint, Secure: true}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("query: %v", err)
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := cfg.set(name, q[name]); err != nil {
			return bad("%v", err)
		}
	}
	return cfg, nil
}

// set applies one query parameter.
func (c *Config) set(name string, values []string) error {
	if _, ok := params[name]; !ok {
		return fmt.Errorf("unknown parameter %q: the parameters are %s", name, paramList())
	}
	if len(values) != 1 {
		return fmt.Errorf("parameter %s given %d times: give it once", name, len(values))
	}
	v := values[0]
	switch name {
	case "endpoint":
		return c.setEndpoint(v)
	case "region":
		c.Region = v
	case "insecure":
		return c.setInsecure(v)
	case "prefix":
		return c.setPrefix(v)
	}
	return nil
}

func (c *Config) setEndpoint(v string) error {
	if strings.Contains(v, "://") {
		return fmt.Errorf("parameter endpoint=%s: give HOST[:PORT] without a scheme (add insecure=1 for plain HTTP)", v)
	}
	if v == "" || strings.ContainsAny(v, "/?#@ ") {
		return fmt.Errorf("parameter endpoint=%q: want HOST[:PORT], e.g. endpoint=s3.example.com or endpoint=127.0.0.1:7070", v)
	}
	c.Endpoint = v
	return nil
}

func (c *Config) setInsecure(v string) error {
	switch v {
	case "1", "true":
		c.Secure = false
	case "0", "false":
		c.Secure = true
	default:
		return fmt.Errorf("parameter insecure=%q: want 1 or true (plain HTTP), 0 or false (HTTPS)", v)
	}
	return nil
}

func (c *Config) setPrefix(v string) error {
	p := strings.Trim(v, "/")
	for _, seg := range strings.Split(p, "/") {
		if p != "" && !validSegment(seg) {
			return fmt.Errorf("parameter prefix=%q: segment %q: want letters, digits, '.', '_' and '-' between slashes, not . or ..", v, seg)
		}
	}
	c.Prefix = p
	return nil
}

func validSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

func paramList() string {
	names := make([]string, 0, len(params))
	for n, what := range params {
		names = append(names, n+" ("+what+")")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// String is the blob URL for c, with its parameters in a fixed order.
func (c Config) String() string {
	q := url.Values{}
	if c.Endpoint != DefaultEndpoint {
		q.Set("endpoint", c.Endpoint)
	}
	if c.Region != "" {
		q.Set("region", c.Region)
	}
	if !c.Secure {
		q.Set("insecure", "1")
	}
	if c.Prefix != "" {
		q.Set("prefix", c.Prefix)
	}
	u := url.URL{Scheme: "s3", Host: c.Bucket, RawQuery: q.Encode()}
	return u.String()
}
