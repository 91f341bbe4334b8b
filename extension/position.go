package extension

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyLine finds the line (1-based) that defines key, or 0. The toml library does not
// expose key positions, so this scans the source: for every way of splitting key into a
// table header and a (dotted) key, it looks for the header and then the key line within
// that table. It handles the usual forms (bare, quoted and dotted keys, [table],
// [[array]]); a miss only drops the line number from the message.
func keyLine(data []byte, key toml.Key) int {
	lines := splitLines(data)
	for split := len(key); split >= 0; split-- {
		table, rest := normKey(key[:split]), normKey(key[split:])
		if n := findInTable(lines, table, rest); n > 0 {
			return n
		}
	}
	return 0
}

func splitLines(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// findInTable returns the line of rest inside the table named table ("" = root). An empty
// rest asks for the header line itself.
func findInTable(lines []string, table, rest string) int {
	current := ""
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if h, ok := header(line); ok {
			current = h
			if rest == "" && h == table {
				return i + 1
			}
			continue
		}
		if rest == "" || current != table {
			continue
		}
		if k, _, ok := strings.Cut(line, "="); ok && normKeyText(k) == rest {
			return i + 1
		}
	}
	return 0
}

func header(line string) (string, bool) {
	if !strings.HasPrefix(line, "[") {
		return "", false
	}
	end := strings.LastIndex(line, "]")
	if end < 0 {
		return "", false
	}
	inner := strings.Trim(line[:end+1], "[]")
	return normKeyText(inner), true
}

func normKey(k toml.Key) string { return strings.Join(k, ".") }

// normKeyText turns `launch . "type"` into `launch.type`.
func normKeyText(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}
