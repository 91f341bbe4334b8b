package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/web"
)

// notesShown bounds the versions whose release notes a package page shows: the newest
// ones, so a package with many releases still gives a small page.
const notesShown = 20

// details are what a package page shows besides its manifest: stored at publish (the
// changelog and release notes), counted (downloads) or synced (repository statistics).
type details struct {
	changelog web.HTML
	downloads web.DownloadChart
	repo      web.RepoStats
}

// packageDetails loads the details of it and adds the release notes of the newest
// notesShown rows (rows in version order, newest first).
func (s *Server) packageDetails(c echo.Context, it *ingest.Item, rows []web.VersionRow) (details, error) {
	days, err := chartDays(c.QueryParam("downloads"))
	if err != nil {
		return details{}, err
	}
	ctx := c.Request().Context()
	html, err := s.md.ChangelogHTML(ctx, it.Latest.ID)
	if err != nil {
		return details{}, err
	}
	if err := s.addNotes(c, it.ID, rows); err != nil {
		return details{}, err
	}
	today := s.now().UTC()
	counts, err := s.md.DailyDownloads(ctx, it.ID, store.DayOf(today.AddDate(0, 0, 1-days)))
	if err != nil {
		return details{}, err
	}
	d := details{changelog: web.StoredChangelog(html), repo: repoStats(it.Package)}
	d.downloads = web.NewDownloadChart(dayCounts(counts), today, days)
	return d, nil
}

// chartDays reads the downloads query parameter: the chart's window in days.
func chartDays(v string) (int, error) {
	switch v {
	case "", "30":
		return web.ChartShort, nil
	case "90":
		return web.ChartLong, nil
	}
	return 0, errf(http.StatusBadRequest, "downloads must be 30 or 90 (the days the downloads chart covers)")
}

func (s *Server) addNotes(c echo.Context, id string, rows []web.VersionRow) error {
	shown := rows[:min(len(rows), notesShown)]
	versions := make([]string, 0, len(shown))
	for _, r := range shown {
		versions = append(versions, r.Version)
	}
	notes, err := s.md.ReleaseNotes(c.Request().Context(), id, versions)
	if err != nil {
		return err
	}
	for i := range shown {
		shown[i].NotesHTML = web.StoredChangelog(notes[shown[i].Version])
	}
	return nil
}

func dayCounts(in []store.DayCount) []web.DayCount {
	out := make([]web.DayCount, 0, len(in))
	for _, d := range in {
		out = append(out, web.DayCount{Day: d.Day, Downloads: d.Downloads})
	}
	return out
}

func repoStats(pk *store.Package) web.RepoStats {
	var r web.RepoStats
	if pk == nil {
		return r
	}
	r.Stars = pk.Stars
	if pk.PushedAt != nil && !pk.PushedAt.IsZero() {
		r.PushedAt = pk.PushedAt.UTC().Format("2006-01-02")
	}
	return r
}

// runsOnOf says where a plugin or canvas runs: the executables of a managed plugin, else
// the browser (a canvas, or a plugin that is a static web app only).
func runsOnOf(it *ingest.Item) web.RunsOn {
	if it.Card == nil || len(it.Card.Platforms) == 0 {
		return web.BrowserRunsOn()
	}
	return web.NativeRunsOn(it.Card.Platforms) // sorted in the card
}
