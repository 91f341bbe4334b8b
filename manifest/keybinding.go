package manifest

import (
	"fmt"
	"regexp"
	"strings"
)

var keybindingIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

var (
	comboModifiers = []string{"mod", "ctrl", "cmd", "meta", "alt", "option", "shift"}
	// editorModifiers are the modifiers that make a combo unreachable by ordinary typing.
	editorModifiers = []string{"mod", "ctrl", "cmd", "meta", "alt", "option"}
	namedKeys       = strings.Fields(`enter escape esc tab space backspace delete insert
		arrowup arrowdown arrowleft arrowright up down left right home end pageup pagedown
		comma period slash backslash semicolon quote minus equal bracketleft bracketright backquote
		f1 f2 f3 f4 f5 f6 f7 f8 f9 f10 f11 f12`)
	// symbolKeys change the reported character under shift, as digits do.
	symbolKeys = strings.Fields(`comma period slash backslash semicolon quote minus equal bracketleft bracketright backquote`)
)

func (c *checker) keybindings(u *UI) {
	if len(u.Keybindings) > 0 && u.Bundle == "" {
		c.probs.Errorf("manifest.ui.keybindings.bundle", "ui.keybindings", "expected ui.bundle to be set because keybindings are dispatched to the UI bundle, found none; add ui.bundle or remove the keybindings")
	}
	seen := map[string]bool{}
	for i, kb := range u.Keybindings {
		p := fmt.Sprintf("ui.keybindings[%d]", i)
		switch {
		case !keybindingIDPattern.MatchString(kb.ID):
			c.probs.Errorf("manifest.ui.keybindings.id", p+".id", "expected an id matching %s, found %q; rename it", keybindingIDPattern, kb.ID)
		case seen[kb.ID]:
			c.probs.Errorf("manifest.ui.keybindings.duplicate", p+".id", "expected unique keybinding ids, found %q again; rename or remove it", kb.ID)
		}
		seen[kb.ID] = true
		if strings.TrimSpace(kb.Description) == "" {
			c.probs.Errorf("manifest.ui.keybindings.description", p+".description", "expected a non-empty description shown in settings, found none; describe the shortcut")
		}
		c.combo(p, kb)
	}
}

func (c *checker) combo(p string, kb Keybinding) {
	mods, msg := parseCombo(kb.Default)
	if msg != "" {
		c.probs.Errorf("manifest.ui.keybindings.default", p+".default", "expected modifiers (mod, ctrl, cmd, meta, alt, option, shift) plus exactly one key joined by '+', e.g. mod+shift+k; found %q (%s); fix the combo", kb.Default, msg)
		return
	}
	if kb.AllowInEditor && !hasAny(mods, editorModifiers) {
		c.probs.Errorf("manifest.ui.keybindings.allow_in_editor", p+".allow_in_editor", "expected a ctrl, cmd, mod or alt modifier on a combo with allow_in_editor: true, found %q (shift alone does not count); add a modifier or drop allow_in_editor", kb.Default)
	}
}

// parseCombo returns the combo's modifiers, or a description of what is wrong.
func parseCombo(combo string) ([]string, string) {
	if strings.TrimSpace(combo) == "" {
		return nil, "empty"
	}
	var mods []string
	key := ""
	for _, raw := range strings.Split(combo, "+") {
		tok := strings.ToLower(strings.TrimSpace(raw))
		switch {
		case tok == "":
			return nil, "empty token"
		case contains(comboModifiers, tok):
			mods = append(mods, tok)
		case !isComboKey(tok):
			return nil, fmt.Sprintf("unknown token %q", tok)
		case key != "":
			return nil, "more than one non-modifier key"
		default:
			key = tok
		}
	}
	if key == "" {
		return nil, "no non-modifier key"
	}
	if contains(mods, "shift") && (isDigit(key) || contains(symbolKeys, key)) {
		return nil, fmt.Sprintf("shift with %q can never match because shift changes the reported character", key)
	}
	return mods, ""
}

func isComboKey(tok string) bool {
	if len(tok) == 1 && (tok[0] >= 'a' && tok[0] <= 'z' || isDigit(tok)) {
		return true
	}
	return contains(namedKeys, tok)
}

func isDigit(tok string) bool { return len(tok) == 1 && tok[0] >= '0' && tok[0] <= '9' }

func hasAny(list, want []string) bool {
	for _, w := range want {
		if contains(list, w) {
			return true
		}
	}
	return false
}
