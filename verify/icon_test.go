package verify_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

// withIcon is a valid plugin whose manifest names iconPath, shipping body there, plus extra
// files before it in the archive.
func withIcon(tb testing.TB, iconPath, body string, before ...entry) []entry {
	m := strings.Replace(pluginManifest, "icon: assets/icon.png", "icon: "+iconPath, 1)
	files := append(before, file("manifest.yaml", m), file("server/plugin-linux-amd64", "#!/bin/sh\necho hello\n"), file(iconPath, body))
	return withChecksums("", files...)
}

func iconFindings(l problem.List) []finding {
	var out []finding
	for _, p := range l {
		if strings.HasPrefix(p.Rule, "manifest.icon.") {
			out = append(out, finding{p.Rule, p.File, p.Severity})
		}
	}
	return out
}

func TestIconAtPublish(t *testing.T) {
	png := pngIcon(t)
	svg := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8"/></svg>`
	jpeg := "\xff\xd8\xff\xe0\x00\x10JFIF\x00" + strings.Repeat("\x00", 64)
	webp := "RIFF\x24\x00\x00\x00WEBPVP8 " + strings.Repeat("\x00", 64)
	gif := "GIF89a\x01\x00\x01\x00\x00\x00\x00;"
	bigPNG := png + strings.Repeat("\x00", verify.MaxIconSize)
	// 9 images of 1 MiB - 1 byte before the icon fill the 8 MiB the reader keeps.
	var images []entry
	for i := range 9 {
		images = append(images, file(fmt.Sprintf("assets/shot-%d.png", i), png+strings.Repeat("\x00", 1<<20-1-len(png))))
	}
	tests := []struct {
		name         string
		entries      []entry
		ct, ext      string
		want         []finding
		messageParts []string
	}{
		{"png", withIcon(t, "assets/icon.png", png), "image/png", ".png", nil, nil},
		{"jpeg", withIcon(t, "assets/icon.jpg", jpeg), "image/jpeg", ".jpg", nil, nil},
		{"webp", withIcon(t, "assets/icon.webp", webp), "image/webp", ".webp", nil, nil},
		{"svg", withIcon(t, "assets/icon.svg", svg), "image/svg+xml", ".svg", nil, nil},
		{"svg after a 600-byte comment", withIcon(t, "assets/icon.svg", "<!--"+strings.Repeat("c", 600)+"-->"+svg[len(`<?xml version="1.0"?>`):]), "image/svg+xml", ".svg", nil, nil},
		{"svg named .png gets .svg", withIcon(t, "assets/icon.png", svg), "image/svg+xml", ".svg", nil, nil},
		{"png named .svg gets .png", withIcon(t, "assets/icon.svg", png), "image/png", ".png", nil, nil},
		{"gif refused", withIcon(t, "assets/icon.gif", gif), "", "", []finding{e("manifest.icon.type", "manifest.yaml")}, []string{"image/gif", "PNG, JPEG, WebP or SVG"}},
		{"text named .png refused", withIcon(t, "assets/icon.png", "not an image at all\n"), "", "", []finding{e("manifest.icon.type", "manifest.yaml")}, []string{"text/plain"}},
		{"html refused", withIcon(t, "assets/icon.svg", "<html><script>alert(1)</script></html>"), "", "", []finding{e("manifest.icon.type", "manifest.yaml")}, []string{"text/html"}},
		{"over 1 MiB refused", withIcon(t, "assets/icon.png", bigPNG), "", "", []finding{e("manifest.icon.size", "manifest.yaml")}, []string{verify.FormatSize(int64(len(bigPNG))), "at most 1 MiB,"}},
		{"after 8 MiB of images", withIcon(t, "assets/zz-icon.png", png, images...), "", "", []finding{e("manifest.icon.kept", "manifest.yaml")}, []string{"8 MiB", "earlier in the archive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), verify.Options{})
			if diff := cmp.Diff(tt.want, iconFindings(rep.Problems), sortFindings); diff != "" {
				t.Errorf("icon problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
			if tt.ct == "" {
				if rep.Icon != nil || rep.OK() {
					t.Errorf("Icon = %+v, OK = %v; want no icon and a refusal", rep.Icon, rep.OK())
				}
				for _, part := range tt.messageParts {
					if !strings.Contains(fmt.Sprint(rep.Problems), part) {
						t.Errorf("problems do not say %q:\n%s", part, fmt.Sprint(rep.Problems))
					}
				}
				return
			}
			if !rep.OK() || rep.Icon == nil {
				t.Fatalf("want an accepted icon, got %+v and %v", rep.Icon, rep.Problems)
			}
			if got := []string{rep.Icon.ContentType, rep.Icon.Ext}; !cmp.Equal(got, []string{tt.ct, tt.ext}) {
				t.Errorf("content type and ext = %v, want %v", got, []string{tt.ct, tt.ext})
			}
		})
	}
}
