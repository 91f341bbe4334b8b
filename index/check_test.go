package index_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/index"
)

// entryDoc wraps plugin entries (JSON objects) in an otherwise valid document.
func entryDoc(entries ...string) []byte {
	return []byte(`{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","source":{"name":"t","url":""},"plugins":[` +
		strings.Join(entries, ",") + `]}`)
}

// entry is a valid plugin entry with the given fields replaced or added (a JSON fragment
// that ends up after the defaults, so it wins when Go decodes duplicate keys).
func entry(extra string) string {
	base := `"id":"acme","kind":"plugin","name":"Acme","categories":[],"version":"1.0.0",` +
		`"package_url":"https://registry.example/p.tar.gz","package_sha256":null,"previews":[],"stars":null,"updated_at":null`
	if extra != "" {
		base += "," + extra
	}
	return "{" + base + "}"
}

const canvasOK = `"kind":"canvas","package_sha256":"` + sha + `","previews":[{"url":"https://cdn.example.com/a.png","alt":"A"}]`

func TestCheckKandev(t *testing.T) {
	nine := strings.Repeat(`{"url":"https://cdn.example.com/a.png","alt":"A"},`, 9)
	tests := []struct {
		name string
		doc  []byte
		want []string // "rule path"
	}{
		{"valid plugin", entryDoc(entry("")), nil},
		{"valid canvas", entryDoc(entry(canvasOK)), nil},
		{"kind missing means plugin", entryDoc(`{"id":"a","categories":[],"version":"1","package_url":"https://x.example/a.tar.gz"}`), nil},
		{"not JSON", []byte(`{"schema_version":1,`), []string{"index.json "}},
		{"an array", []byte(`[]`), []string{"index.json "}},
		{"schema_version 2", []byte(`{"schema_version":2,"generated_at":"2026-09-18T06:00:12Z","source":{},"plugins":[]}`), []string{"index.schema_version schema_version"}},
		{"schema_version missing", []byte(`{"generated_at":"2026-09-18T06:00:12Z","source":{},"plugins":[]}`), []string{"index.schema_version schema_version"}},
		{"schema_version string", []byte(`{"schema_version":"1","generated_at":"2026-09-18T06:00:12Z","source":{},"plugins":[]}`), []string{"index.schema_version schema_version"}},
		{"plugins null", []byte(`{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","source":{},"plugins":null}`), []string{"index.plugins.null plugins"}},
		{"plugins missing", []byte(`{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","source":{}}`), []string{"index.plugins.null plugins"}},
		{"plugins an object", []byte(`{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","source":{},"plugins":{}}`), []string{"index.json plugins"}},
		{"generated_at missing", []byte(`{"schema_version":1,"source":{},"plugins":[]}`), []string{"index.generated_at generated_at"}},
		{"generated_at other format", []byte(`{"schema_version":1,"generated_at":"2026-09-18 06:00","source":{},"plugins":[]}`), []string{"index.generated_at generated_at"}},
		{"wrong type breaks the document", entryDoc(entry(`"stars":"5"`)), []string{"index.json plugins[0]"}},
		{"shared_state must be a boolean", entryDoc(entry(`"permissions":{"shared_state":[]}`)), []string{"index.json plugins[0]"}},
		{"empty id", entryDoc(entry(`"id":""`)), []string{"index.plugin.id plugins[0].id"}},
		{"duplicate id", entryDoc(entry(""), entry("")), []string{"index.plugin.id.duplicate plugins[1].id"}},
		{"unknown kind", entryDoc(entry(`"kind":"theme"`)), []string{"index.plugin.kind plugins[0].kind"}},
		{"canvas without previews", entryDoc(entry(`"kind":"canvas","package_sha256":"` + sha + `"`)), []string{"index.plugin.previews plugins[0].previews"}},
		{"canvas without digest", entryDoc(`{"id":"a","kind":"canvas","categories":[],"version":"1","package_url":"https://x.example/a.tar.gz","previews":[{"url":"https://cdn.example.com/a.png","alt":"A"}]}`), []string{"index.plugin.package_sha256 plugins[0].package_sha256"}},
		{"canvas with upper-case digest", entryDoc(entry(canvasOK + `,"package_sha256":"` + strings.ToUpper(sha) + `"`)), []string{"index.plugin.package_sha256 plugins[0].package_sha256"}},
		{"plugin with short digest", entryDoc(entry(`"package_sha256":"abc"`)), []string{"index.plugin.package_sha256 plugins[0].package_sha256"}},
		{"nine previews", entryDoc(entry(`"previews":[` + strings.TrimSuffix(nine, ",") + `]`)), []string{"index.plugin.previews plugins[0].previews"}},
		{"preview over http", entryDoc(entry(`"previews":[{"url":"http://cdn.example.com/a.png","alt":"A"}]`)), []string{"index.plugin.previews plugins[0].previews[0].url"}},
		{"preview with credentials", entryDoc(entry(`"previews":[{"url":"https://u:p@cdn.example.com/a.png","alt":"A"}]`)), []string{"index.plugin.previews plugins[0].previews[0].url"}},
		{"preview with fragment", entryDoc(entry(`"previews":[{"url":"https://cdn.example.com/a.png#x","alt":"A"}]`)), []string{"index.plugin.previews plugins[0].previews[0].url"}},
		{"preview URL too long", entryDoc(entry(`"previews":[{"url":"https://cdn.example.com/` + strings.Repeat("a", 2030) + `","alt":"A"}]`)), []string{"index.plugin.previews plugins[0].previews[0].url"}},
		{"preview alt blank", entryDoc(entry(`"previews":[{"url":"https://cdn.example.com/a.png","alt":"  "}]`)), []string{"index.plugin.previews plugins[0].previews[0].alt"}},
		{"preview alt too long", entryDoc(entry(`"previews":[{"url":"https://cdn.example.com/a.png","alt":"` + strings.Repeat("a", 301) + `"}]`)), []string{"index.plugin.previews plugins[0].previews[0].alt"}},
		{"categories null", entryDoc(entry(`"categories":null`)), []string{"index.plugin.categories plugins[0].categories"}},
		{"categories missing", entryDoc(`{"id":"a","version":"1","package_url":"https://x.example/a.tar.gz"}`), []string{"index.plugin.categories plugins[0].categories"}},
		{"updated_at with offset", entryDoc(entry(`"updated_at":"2026-09-18T08:00:12+02:00"`)), []string{"index.plugin.updated_at plugins[0].updated_at"}},
		{"updated_at with fraction", entryDoc(entry(`"updated_at":"2026-09-18T06:00:12.5Z"`)), []string{"index.plugin.updated_at plugins[0].updated_at"}},
		{"updated_at empty", entryDoc(entry(`"updated_at":""`)), []string{"index.plugin.updated_at plugins[0].updated_at"}},
		{"version missing", entryDoc(entry(`"version":""`)), []string{"index.plugin.version plugins[0].version"}},
		{"package_url relative", entryDoc(entry(`"package_url":"p.tar.gz"`)), []string{"index.plugin.package_url plugins[0].package_url"}},
		{"icon_url relative", entryDoc(entry(`"icon_url":"icon.svg"`)), []string{"index.plugin.icon_url plugins[0].icon_url"}},
		{"negative stars", entryDoc(entry(`"stars":-1`)), []string{"index.plugin.stars plugins[0].stars"}},
		{"publisher ids not decimal", entryDoc(entry(`"publisher":{"schema_version":1,"repository_id":"R_1","owner_id":"2"}`)), []string{"index.plugin.publisher plugins[0].publisher"}},
		{"one bad entry among good ones", entryDoc(entry(`"id":"a"`), entry(`"id":"b","kind":"theme"`), entry(`"id":"c"`)), []string{"index.plugin.kind plugins[1].kind"}},
		{"over 5 MiB", entryDoc(entry(`"description":"` + strings.Repeat("x", index.MaxKandevSize) + `"`)), []string{"index.size "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range index.CheckKandev(tt.doc) {
				got = append(got, p.Rule+" "+p.Path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
