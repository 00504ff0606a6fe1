//! Which directories the server may read: the model and run directories it
//! was started with, and nothing else.  Paths in requests (the `model=` and
//! `egdb=` of a player spec) are resolved (symbolic links and `..` followed)
//! and refused unless they lie inside one of them.

use super::error::ApiError;
use crate::commands::CliError;
use std::path::{Path, PathBuf};
use tammi_trainer::{RunDir, RunState};

/// The directories the server was given, resolved once at start.
#[derive(Debug)]
pub struct Roots {
    /// `--model`, as given (for display) and resolved.
    pub model: Option<(PathBuf, PathBuf)>,
    /// `--run`, resolved.
    pub run: Option<PathBuf>,
    /// `--eval` (a learned evaluation for alpha-beta), as given and resolved.
    pub eval: Option<(PathBuf, PathBuf)>,
}

impl Roots {
    /// Resolves the directories; one that does not exist is an error now,
    /// not on the first request.
    pub fn new(
        model: Option<&Path>,
        run: Option<&Path>,
        eval: Option<&Path>,
    ) -> Result<Roots, CliError> {
        let resolve = |flag: &str, p: &Path| {
            std::fs::canonicalize(p)
                .map_err(|e| CliError(format!("{flag} {}: {e}", p.display())))
                .and_then(|c| {
                    if c.is_dir() {
                        Ok(c)
                    } else {
                        Err(CliError(format!("{flag} {}: not a directory", p.display())))
                    }
                })
        };
        let model = model
            .map(|p| resolve("--model", p).map(|c| (p.to_path_buf(), c)))
            .transpose()?;
        let run = run.map(|p| resolve("--run", p)).transpose()?;
        let eval = eval
            .map(|p| resolve("--eval", p).map(|c| (p.to_path_buf(), c)))
            .transpose()?;
        if let Some(r) = &run
            && !RunDir::new(r).exists()
        {
            return Err(CliError(format!(
                "--run {}: holds no run (no state.json)",
                r.display()
            )));
        }
        Ok(Roots { model, run, eval })
    }

    /// `path` resolved, if it lies inside a directory the server was given.
    pub fn check(&self, what: &str, path: &Path) -> Result<PathBuf, ApiError> {
        let refused = || {
            ApiError::forbidden(format!(
                "{what} {}: outside the directories this server was given (--model, --run, --eval)",
                path.display()
            ))
        };
        // A path that does not resolve is refused the same way, so the
        // reply does not tell which files exist elsewhere.
        let resolved = std::fs::canonicalize(path).map_err(|_| refused())?;
        let inside = self
            .model
            .iter()
            .map(|(_, c)| c)
            .chain(self.run.iter())
            .chain(self.eval.iter().map(|(_, c)| c))
            .any(|root| resolved.starts_with(root));
        if inside { Ok(resolved) } else { Err(refused()) }
    }

    /// The model the page analyses with: `--model`, or the run's newest
    /// accepted model; `None` without either.
    pub fn analysis_model(&self) -> Result<Option<PathBuf>, ApiError> {
        if let Some((_, m)) = &self.model {
            return Ok(Some(m.clone()));
        }
        let Some(run) = &self.run else {
            return Ok(None);
        };
        let dir = RunDir::new(run);
        let state: RunState = tammi_trainer::rundir::read_json(&dir.state())
            .map_err(|e| ApiError::internal(format!("run state: {e}")))?;
        Ok(Some(dir.model(state.accepted)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_inside_the_given_directories_are_allowed() {
        let outer = tempfile::tempdir().unwrap();
        let model = outer.path().join("model");
        std::fs::create_dir_all(model.join("sub")).unwrap();
        std::fs::create_dir_all(outer.path().join("secret")).unwrap();
        let roots = Roots::new(Some(&model), None, None).unwrap();
        assert!(roots.check("model", &model.join("sub")).is_ok());
        let escape = model.join("..").join("secret");
        let e = roots.check("model", &escape).unwrap_err();
        assert_eq!(e.status, axum::http::StatusCode::FORBIDDEN);
        assert!(roots.check("model", Path::new("/etc")).is_err());
        assert!(roots.check("model", &model.join("missing")).is_err());
        #[cfg(unix)]
        {
            let link = model.join("link");
            std::os::unix::fs::symlink(outer.path().join("secret"), &link).unwrap();
            assert!(
                roots.check("model", &link).is_err(),
                "a link out is refused"
            );
        }
    }

    #[test]
    fn a_missing_directory_or_a_directory_without_a_run_is_refused_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let e = Roots::new(Some(&dir.path().join("nope")), None, None).unwrap_err();
        assert!(e.0.contains("--model"), "{}", e.0);
        let e = Roots::new(None, Some(dir.path()), None).unwrap_err();
        assert!(e.0.contains("no run"), "{}", e.0);
    }
}
