package problem_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/problem"
)

var manifestFields = []string{"id", "api_version", "version", "display_name", "description", "author", "categories", "icon", "repo_url", "license", "homepage", "min_kandev_version", "runtime"}

func TestSuggest(t *testing.T) {
	aliases := map[string]string{"name": "display_name", "desc": "description", "repository": "repo_url", "nope": "not_known"}
	tests := []struct{ name, want string }{
		{"name", "display_name"},         // alias
		{"Name", "display_name"},         // alias, any case
		{"desc", "description"},          // alias
		{"repository", "repo_url"},       // alias
		{"nope", ""},                     // an alias to an unknown field is not offered
		{"dispaly_name", "display_name"}, // two edits
		{"Display_Name", "display_name"}, // case only
		{"verison", "version"},           // transposition: two edits
		{"categories_", "categories"},    // one edit
		{"ic", "id"},                     // short names allow one edit
		{"xyz", ""},                      // nothing near
		{"previews", ""},                 // nothing within three edits
		{strings.Repeat("a", 5000), ""},  // long names are skipped by length
	}
	for _, tt := range tests {
		if got := problem.Suggest(tt.name, manifestFields, aliases); got != tt.want {
			t.Errorf("Suggest(%.20q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := problem.DidYouMean("name", manifestFields, aliases); got != "did you mean `display_name`?" {
		t.Errorf("DidYouMean(name) = %q", got)
	}
	if got := problem.DidYouMean("xyz", manifestFields, aliases); got != "" {
		t.Errorf("DidYouMean(xyz) = %q, want \"\"", got)
	}
}

// BenchmarkSuggest: the cost of one suggestion by name length; names far longer than every
// known name cost only the length tests.
func BenchmarkSuggest(b *testing.B) {
	for _, n := range []int{4, 12, 24, 1000, 100000} {
		name := strings.Repeat("q", n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				problem.Suggest(name, manifestFields, nil)
			}
		})
	}
}
