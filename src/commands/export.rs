//! `tammi export`: a model for other front ends, as ONNX or safetensors,
//! with a JSON card beside it (`FILE.card.json`, e.g. `net.onnx.card.json`)
//! that describes the input planes, the policy layout with worked examples
//! and the value head.  The card is named after the whole file name, so the
//! ONNX and the safetensors export of one net (`net.onnx`,
//! `net.safetensors`) each keep their own card.

use super::{CliError, CliResult, write_atomic};
use std::path::{Path, PathBuf};
use tammi_model::export::{export_card, export_onnx, export_safetensors};
use tammi_model::{DeviceChoice, Model};
use tammi_rules::Variant;
use tammi_search::nnue::{CARD_FILE, KIND, NnueNet, WEIGHTS_FILE};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// ONNX (opset 18), dynamic batch; runs in onnxruntime, tract, ONNX.js, ...
    Onnx,
    /// The weights only, as safetensors.
    Safetensors,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Model directory (card.json + weights), e.g. models/english-default or RUN/models/gen-0012.
    #[arg(long)]
    pub model: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "onnx")]
    pub format: Format,
    /// Output file; the card is written beside it as FILE.card.json (net.onnx -> net.onnx.card.json).
    #[arg(long)]
    pub out: PathBuf,
    /// Variant of the model.
    #[arg(long, default_value = "english")]
    pub variant: Variant,
}

/// `dir/name.onnx` -> `dir/name.onnx.card.json`.
pub fn card_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".card.json");
    out.with_file_name(name)
}

/// Whether `dir` holds a search evaluation (its card says `kind: search-eval`)
/// rather than an MCTS model (a card without a kind); a card of any other
/// kind is an error.
fn is_search_eval(dir: &Path) -> Result<bool, CliError> {
    let card = std::fs::read_to_string(dir.join(CARD_FILE))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    match card.as_ref().and_then(|c| c.get("kind")) {
        None => Ok(false),
        Some(k) if *k == KIND => Ok(true),
        Some(k) => Err(CliError(format!(
            "{}: its {CARD_FILE} says kind {k}: tammi exports MCTS models (no kind) and \
             search evaluations (kind \"{KIND}\")",
            dir.display()
        ))),
    }
}

/// The file name `--out` names (the card records it).
fn out_file_name(out: &Path) -> Result<String, CliError> {
    out.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| CliError(format!("--out {} names no file", out.display())))
}

/// Writes `bytes` to `out` and `card` beside it (each atomically, folders
/// created as needed); returns the card's path.
fn write_with_card(
    out: &Path,
    bytes: &[u8],
    card: &impl serde::Serialize,
) -> Result<PathBuf, CliError> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError(format!("{}: {e}", parent.display())))?;
    }
    write_atomic(out, bytes)?;
    let card_file = card_path(out);
    let json = serde_json::to_string_pretty(card).expect("cards serialise");
    write_atomic(&card_file, format!("{json}\n").as_bytes())?;
    Ok(card_file)
}

/// A search evaluation (`tammi train-eval`'s model): its safetensors, with
/// its card (shape, inputs, scale, digest) beside them.  There is no ONNX
/// export of it: its first layer is meant to be kept incrementally, which
/// an ONNX graph cannot express, and a dense one would mislead.
fn export_search_eval(args: &Args) -> CliResult {
    if args.format != Format::Safetensors {
        return Err(CliError(format!(
            "{} is a search evaluation: export it with --format safetensors (no ONNX graph \
             is written for it)",
            args.model.display()
        )));
    }
    // Loading checks the card, the shapes and the digest before anything is copied.
    let net = NnueNet::load(&args.model, None)?;
    let weights = std::fs::read(args.model.join(WEIGHTS_FILE))
        .map_err(|e| CliError(format!("{}: {e}", args.model.join(WEIGHTS_FILE).display())))?;
    let mut card: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(args.model.join(CARD_FILE))
            .map_err(|e| CliError(format!("{}: {e}", args.model.display())))?,
    )?;
    card["format"] = "safetensors".into();
    card["file"] = out_file_name(&args.out)?.into();
    let card_file = write_with_card(&args.out, &weights, &card)?;
    outln!(
        "{} ({} bytes, search evaluation for {}, width {}) and {}",
        args.out.display(),
        weights.len(),
        net.variant(),
        net.width(),
        card_file.display()
    );
    Ok(())
}

pub fn run(args: &Args) -> CliResult {
    if is_search_eval(&args.model)? {
        return export_search_eval(args);
    }
    let model = Model::load(&args.model, args.variant, DeviceChoice::Flex)?;
    let (bytes, format, tensors) = match args.format {
        Format::Onnx => (export_onnx(&model)?, "onnx", Vec::new()),
        Format::Safetensors => {
            let (bytes, tensors) = export_safetensors(&model)?;
            (bytes, "safetensors", tensors)
        }
    };
    let file = out_file_name(&args.out)?;
    let mut card = export_card(&model, format, &file, &bytes);
    card.tensors = tensors;
    let card_file = write_with_card(&args.out, &bytes, &card)?;
    outln!(
        "{} ({} bytes, {format}) and {}",
        args.out.display(),
        bytes.len(),
        card_file.display()
    );
    Ok(())
}
