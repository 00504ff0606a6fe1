//! The presets in `configs/` say what they are: `default.toml` writes out
//! every key, and where its value is not the built-in default its comment
//! names the built-in one as `(built-in default: X)`; `tiny.toml` sets only
//! keys that differ from the built-in defaults; every preset loads.

use std::path::{Path, PathBuf};
use tammi_trainer::config::RunConfig;

fn preset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../configs")
        .join(name)
}

/// The config with one key set (every other key at its built-in default).
fn with_one_key(section: &str, key: &str, literal: &str) -> RunConfig {
    RunConfig::parse(&format!("[{section}]\n{key} = {literal}\n"), "test")
        .unwrap_or_else(|e| panic!("[{section}] {key} = {literal}: {e}"))
}

/// Every `(section, key, value literal)` a preset sets, in file order;
/// sub-sections are named by their dotted path (`train.window`).
fn keys_of(text: &str) -> Vec<(String, String, String)> {
    fn walk(section: &str, table: &toml::Table, keys: &mut Vec<(String, String, String)>) {
        for (key, v) in table {
            match v {
                toml::Value::Table(sub) => walk(&format!("{section}.{key}"), sub, keys),
                _ => keys.push((section.to_string(), key.clone(), v.to_string())),
            }
        }
    }
    let table: toml::Table = text.parse().unwrap();
    let mut keys = Vec::new();
    for (section, value) in &table {
        let toml::Value::Table(t) = value else {
            panic!("top-level key {section} outside a section")
        };
        walk(section, t, &mut keys);
    }
    keys
}

/// The `(built-in default: X)` note in the comment lines right above
/// `key = ...` in `[section]`, if any.
fn built_in_note(text: &str, section: &str, key: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let header = format!("[{section}]");
    let start = lines.iter().position(|l| l.trim() == header)?;
    let at = lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with('['))
        .position(|l| {
            l.split('=')
                .next()
                .is_some_and(|k| k.trim() == key && l.contains('='))
        })?
        + start
        + 1;
    let mut comment = Vec::new();
    for l in lines[..at].iter().rev() {
        match l.strip_prefix('#') {
            Some(c) => comment.push(c),
            None => break,
        }
    }
    comment.reverse();
    let comment = comment.join(" ");
    let comment = comment.split_whitespace().collect::<Vec<_>>().join(" ");
    let (_, rest) = comment.split_once("(built-in default: ")?;
    let (note, _) = rest.split_once(')')?;
    Some(note.trim().to_string())
}

#[test]
fn default_toml_shows_every_key_and_names_the_built_in_default_where_it_differs() {
    let text = std::fs::read_to_string(preset("default.toml")).unwrap();
    let built_in = RunConfig::default();
    let set = keys_of(&text);
    // Every key of every section is written out.
    for (section, key, _) in keys_of(&built_in.to_toml()) {
        assert!(
            set.iter().any(|(s, k, _)| *s == section && *k == key),
            "configs/default.toml does not show [{section}] {key}"
        );
    }
    let mut differing = 0;
    for (section, key, literal) in &set {
        let is_default = with_one_key(section, key, literal) == built_in;
        match built_in_note(&text, section, key) {
            None => assert!(
                is_default,
                "[{section}] {key} = {literal} is not the built-in default, and its comment \
                 does not say which is"
            ),
            Some(note) => {
                assert!(
                    !is_default,
                    "[{section}] {key} = {literal} is the built-in default, yet its comment \
                     names another ({note})"
                );
                assert!(
                    with_one_key(section, key, &note) == built_in,
                    "[{section}] {key}: the built-in default is not {note}"
                );
                differing += 1;
            }
        }
    }
    // The preset is tuned: it does differ (and the notes were found).
    assert!(differing >= 10, "only {differing} keys differ");
}

#[test]
fn tiny_toml_sets_only_keys_that_differ_from_the_built_in_defaults() {
    let text = std::fs::read_to_string(preset("tiny.toml")).unwrap();
    let built_in = RunConfig::default();
    let set = keys_of(&text);
    assert!(!set.is_empty());
    for (section, key, literal) in set {
        assert!(
            with_one_key(&section, &key, &literal) != built_in,
            "configs/tiny.toml sets [{section}] {key} = {literal}, the built-in default"
        );
    }
}

#[test]
fn every_preset_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut loaded = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let search_eval = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("search-eval"));
        if path.extension().is_some_and(|e| e == "toml") {
            if search_eval {
                // `tammi train-eval` configs, whose MCTS run's config must load too.
                let cfg = tammi_trainer::search_eval::SearchEvalConfig::load(&path)
                    .unwrap_or_else(|e| panic!("{e}"));
                RunConfig::load(&path.with_file_name(&cfg.selfplay.config))
                    .unwrap_or_else(|e| panic!("{e}"));
            } else {
                RunConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
            }
            loaded += 1;
        }
    }
    assert!(loaded >= 3, "{loaded} presets");
}
