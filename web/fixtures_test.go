package web_test

import (
	"fmt"

	"github.com/pluginyard/registry/readme"
	"github.com/pluginyard/registry/web"
)

// These builders make the view models the page tests render. They are the
// shape the server fills from the store; the numbers are arbitrary.

func sampleCard(i int) web.Card {
	kinds := []string{web.KindPlugin, web.KindCanvas, web.KindExtension}
	c := web.Card{
		ID:          fmt.Sprintf("plugin-%04d", i),
		Kind:        kinds[i%3],
		Name:        fmt.Sprintf("Plugin %d", i),
		Author:      fmt.Sprintf("Author %d", i%40),
		Description: "Shows how long tasks wait in each column, with weekly trends and a per-agent breakdown, so you can see where work piles up and why it stalls before review.",
		Version:     fmt.Sprintf("1.%d.0", i%17),
		Verified:    i%2 == 0,
		Downloads:   int64(i * 37),
		Categories:  []string{fmt.Sprintf("category-%d", i%30)},
		URL:         fmt.Sprintf("/plugins/plugin-%04d", i),
	}
	if i%4 == 0 {
		c.IconURL = fmt.Sprintf("/icons/%064x.png", i)
	}
	return c
}

func sampleCards(n int) []web.Card {
	out := make([]web.Card, n)
	for i := range out {
		out[i] = sampleCard(i)
	}
	return out
}

func sampleCategories(n int) []web.CategoryCount {
	out := make([]web.CategoryCount, n)
	for i := range out {
		out[i] = web.CategoryCount{Name: fmt.Sprintf("category-%d", i), Count: 1000 / n}
	}
	return out
}

// homeFor renders page `page` of `all` the way the server paginates.
func homeFor(all []web.Card, page, perPage int) web.HomePage {
	start := min((page-1)*perPage, len(all))
	end := min(start+perPage, len(all))
	p := web.HomePage{
		Meta:       web.Meta{Title: "Find a plugin", Description: "Plugins for Kandev", CanonicalURL: "https://plugins.example.com/"},
		Sort:       web.SortDownloads,
		Cards:      all[start:end],
		Categories: sampleCategories(30),
		Total:      len(all),
		Page:       page,
		PerPage:    perPage,
	}
	if page == 1 {
		p.Featured = all[:min(6, len(all))]
	}
	if page > 1 {
		p.PrevURL = web.SearchURL("", "", "", web.SortDownloads, page-1)
	}
	if end < len(all) {
		p.NextURL = web.SearchURL("", "", "", web.SortDownloads, page+1)
	}
	return p
}

func int64p(v int64) *int64 { return &v }

func sampleVerification() web.Verification {
	return web.Verification{
		Checksums:      web.ChecksumsVerified,
		ChecksumFiles:  12,
		SignatureType:  "sigstore",
		SAN:            "https://github.com/acme/kandev-stats/.github/workflows/release.yml@refs/tags/v1.2.0",
		Issuer:         "https://token.actions.githubusercontent.com",
		Repository:     "acme/kandev-stats",
		Workflow:       ".github/workflows/release.yml",
		Ref:            "refs/tags/v1.2.0",
		CommitSHA:      "0123456789abcdef0123456789abcdef01234567",
		RunURL:         "https://github.com/acme/kandev-stats/actions/runs/42",
		LogIndex:       int64p(123456789),
		IntegratedTime: "2026-09-18 06:00 UTC",
	}
}

func sampleVersions(n int) []web.VersionRow {
	out := make([]web.VersionRow, n)
	for i := range out {
		v := fmt.Sprintf("1.%d.0", n-1-i)
		out[i] = web.VersionRow{
			Version:   v,
			CreatedAt: "2026-09-18",
			Size:      int64(2_000_000 + i),
			SHA256:    fmt.Sprintf("%064x", i+1),
			URL:       "/packages/acme-stats/acme-stats-" + v + ".tar.gz",
		}
	}
	return out
}

func samplePlugin() web.PluginPage {
	card := web.Card{
		ID: "acme-stats", Kind: web.KindPlugin, Name: "Acme Stats", Author: "Acme",
		Description: "Task throughput charts.", Version: "1.2.0", Verified: true, Downloads: 1234,
		Categories: []string{"analytics", "reporting"}, URL: "/plugins/acme-stats", Publisher: "acme",
	}
	versions := sampleVersions(3)
	versions[0].Yanked = true
	versions[0].YankReason = "corrupts the cache"
	versions[1].Latest = true
	html, _, err := readme.Render([]byte("# Acme Stats\n\nCharts for **Kandev**.\n"))
	if err != nil {
		panic(err)
	}
	return web.PluginPage{
		Meta:         web.Meta{Title: "Acme Stats"},
		Card:         card,
		PublisherURL: web.PublisherURL("acme"),
		READMEHTML:   web.StoredREADME(html),
		Previews: []web.Preview{
			{URL: "https://example.com/cover.png", Alt: "The stats page with a week of throughput"},
			{URL: "https://example.com/second.png", Alt: "Per-agent breakdown"},
		},
		Permissions: web.PermissionsFor(web.PermissionInput{
			ManagedBinary: true, Secrets: true, APIRead: []string{"tasks"},
			Webhooks: []web.AccessPoint{{Key: "slack", Access: "public"}},
		}),
		Versions:         versions,
		Deprecated:       &web.Deprecation{Reason: "Merged into Acme Insights.", Replacement: "acme-insights", ReplacementURL: "/plugins/acme-insights"},
		Install:          web.NewInstall("https://plugins.example.com/index.json", "https://plugins.example.com/packages/acme-stats/acme-stats-1.1.0.tar.gz", fmt.Sprintf("%064x", 2)),
		Verification:     sampleVerification(),
		RepoURL:          "https://github.com/acme/kandev-stats",
		License:          "MIT",
		MinKandevVersion: "0.91.1",
		UpdatedAt:        "2026-09-18",
		Warnings:         []string{"manifest: homepage is not https"},
	}
}

func sampleExtension() web.ExtensionPage {
	return web.ExtensionPage{
		Meta: web.Meta{Title: "Jira trigger"},
		Card: web.Card{ID: "@acme/curupira-jira", Kind: web.KindExtension, Name: "@acme/curupira-jira",
			Author: "Acme", Version: "0.3.0", URL: "/extensions/@acme/curupira-jira"},
		TriggerTypes:    []string{"jira_issue_created", "jira_issue_moved"},
		Runtime:         "node",
		ProtocolVersion: 2,
		LaunchCommand:   "npx -y @acme/curupira-jira@0.3.0",
		Versions:        sampleVersions(1),
		Install:         web.NewInstall("https://plugins.example.com/curupira/index.json", "https://plugins.example.com/packages/x/x-0.3.0.tar.gz", fmt.Sprintf("%064x", 9)),
		Verification:    web.Verification{Checksums: web.ChecksumsAbsent},
		RepoURL:         "https://github.com/acme/curupira-jira",
		License:         "Apache-2.0",
	}
}
