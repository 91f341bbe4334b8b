package web

import (
	"fmt"
	"strconv"
	"time"
)

// Chart windows, in days.
const (
	ChartShort = 30
	ChartLong  = 90
)

// DayCount is a package's downloads on one UTC day.
type DayCount struct {
	Day       string // YYYY-MM-DD
	Downloads int64
}

// Chart geometry, in viewBox units: one bar per day, chartBarWidth wide with a gap of
// chartGap, bars at most chartHeight tall.
const (
	chartBarWidth = 6
	chartGap      = 2
	chartHeight   = 60
)

// ChartBar is one day's bar.
type ChartBar struct {
	X, Y, Height int
	Day          string
	Downloads    int64
}

// DownloadChart is a package's downloads per day over the last Days days, drawn as an
// inline SVG bar chart with a text summary.
type DownloadChart struct {
	Days      int    // ChartShort or ChartLong
	From, To  string // first and last day shown (To is today, UTC)
	Bars      []ChartBar
	Total     int64
	Peak      ChartBar // the busiest day (the latest of equals); zero when Total is 0
	OtherDays int      // the window the page links to instead
}

// NewDownloadChart lays out counts (any order, days outside the window ignored) over the
// days window ending today (UTC).
func NewDownloadChart(counts []DayCount, today time.Time, days int) DownloadChart {
	c := DownloadChart{Days: days, OtherDays: ChartLong}
	if days == ChartLong {
		c.OtherDays = ChartShort
	}
	end := today.UTC().Truncate(24 * time.Hour)
	start := end.AddDate(0, 0, 1-days)
	c.From, c.To = start.Format(time.DateOnly), end.Format(time.DateOnly)
	byDay := map[string]int64{}
	for _, d := range counts {
		byDay[d.Day] += d.Downloads // days outside the window have no bar
	}
	for i := range days {
		day := start.AddDate(0, 0, i).Format(time.DateOnly)
		bar := ChartBar{X: i * (chartBarWidth + chartGap), Day: day, Downloads: byDay[day]}
		c.Total += bar.Downloads
		if bar.Downloads > 0 && bar.Downloads >= c.Peak.Downloads {
			c.Peak = bar
		}
		c.Bars = append(c.Bars, bar)
	}
	for i := range c.Bars {
		c.Bars[i].Height = barHeight(c.Bars[i].Downloads, c.Peak.Downloads)
		c.Bars[i].Y = chartHeight - c.Bars[i].Height
	}
	return c
}

// barHeight scales n against the peak; a day with any download gets at least one unit.
func barHeight(n, peak int64) int {
	if n == 0 || peak == 0 {
		return 0
	}
	return max(1, int(n*chartHeight/peak))
}

func (c DownloadChart) viewBox() string {
	return fmt.Sprintf("0 0 %d %d", c.Days*(chartBarWidth+chartGap)-chartGap, chartHeight)
}

func (c DownloadChart) width() string {
	return strconv.Itoa(c.Days*(chartBarWidth+chartGap) - chartGap)
}

// Summary is the chart in one sentence, for every reader.
func (c DownloadChart) Summary() string {
	if c.Total == 0 {
		return fmt.Sprintf("No downloads in the last %d days (%s to %s).", c.Days, c.From, c.To)
	}
	return fmt.Sprintf("%s in the last %d days (%s to %s); the busiest day was %s, with %s.",
		countWord(c.Total, "download"), c.Days, c.From, c.To, c.Peak.Day, countWord(c.Peak.Downloads, "download"))
}

func countWord(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fullCount(int(n)) + " " + word + "s"
}

func barTitle(b ChartBar) string { return b.Day + ": " + countWord(b.Downloads, "download") }

// ChartURL links the window of days on a package page.
func ChartURL(pageURL string, days int) string {
	if days == ChartShort {
		return pageURL + "#downloads"
	}
	return pageURL + "?downloads=" + strconv.Itoa(days) + "#downloads"
}
