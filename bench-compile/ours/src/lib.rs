//! 50 tools written with `#[tool]` and `#[derive(ToolSchema)]`.
#![allow(missing_docs, dead_code)]
use serde::{Deserialize, Serialize};
use tools_runtime::{tool, ToolDefinition, ToolSchema};

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode0 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found0 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 0: search one file.
#[tool]
pub async fn tool_0(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode0,
) -> Result<Found0, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 0";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found0 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode1 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found1 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 1: search one file.
#[tool]
pub async fn tool_1(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode1,
) -> Result<Found1, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 1";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found1 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode2 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found2 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 2: search one file.
#[tool]
pub async fn tool_2(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode2,
) -> Result<Found2, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 2";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found2 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode3 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found3 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 3: search one file.
#[tool]
pub async fn tool_3(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode3,
) -> Result<Found3, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 3";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found3 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode4 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found4 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 4: search one file.
#[tool]
pub async fn tool_4(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode4,
) -> Result<Found4, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 4";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found4 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode5 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found5 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 5: search one file.
#[tool]
pub async fn tool_5(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode5,
) -> Result<Found5, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 5";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found5 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode6 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found6 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 6: search one file.
#[tool]
pub async fn tool_6(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode6,
) -> Result<Found6, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 6";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found6 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode7 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found7 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 7: search one file.
#[tool]
pub async fn tool_7(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode7,
) -> Result<Found7, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 7";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found7 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode8 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found8 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 8: search one file.
#[tool]
pub async fn tool_8(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode8,
) -> Result<Found8, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 8";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found8 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode9 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found9 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 9: search one file.
#[tool]
pub async fn tool_9(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode9,
) -> Result<Found9, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 9";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found9 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode10 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found10 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 10: search one file.
#[tool]
pub async fn tool_10(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode10,
) -> Result<Found10, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 10";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found10 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode11 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found11 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 11: search one file.
#[tool]
pub async fn tool_11(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode11,
) -> Result<Found11, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 11";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found11 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode12 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found12 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 12: search one file.
#[tool]
pub async fn tool_12(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode12,
) -> Result<Found12, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 12";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found12 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode13 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found13 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 13: search one file.
#[tool]
pub async fn tool_13(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode13,
) -> Result<Found13, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 13";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found13 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode14 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found14 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 14: search one file.
#[tool]
pub async fn tool_14(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode14,
) -> Result<Found14, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 14";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found14 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode15 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found15 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 15: search one file.
#[tool]
pub async fn tool_15(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode15,
) -> Result<Found15, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 15";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found15 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode16 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found16 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 16: search one file.
#[tool]
pub async fn tool_16(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode16,
) -> Result<Found16, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 16";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found16 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode17 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found17 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 17: search one file.
#[tool]
pub async fn tool_17(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode17,
) -> Result<Found17, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 17";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found17 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode18 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found18 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 18: search one file.
#[tool]
pub async fn tool_18(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode18,
) -> Result<Found18, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 18";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found18 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode19 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found19 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 19: search one file.
#[tool]
pub async fn tool_19(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode19,
) -> Result<Found19, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 19";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found19 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode20 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found20 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 20: search one file.
#[tool]
pub async fn tool_20(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode20,
) -> Result<Found20, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 20";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found20 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode21 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found21 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 21: search one file.
#[tool]
pub async fn tool_21(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode21,
) -> Result<Found21, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 21";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found21 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode22 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found22 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 22: search one file.
#[tool]
pub async fn tool_22(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode22,
) -> Result<Found22, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 22";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found22 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode23 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found23 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 23: search one file.
#[tool]
pub async fn tool_23(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode23,
) -> Result<Found23, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 23";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found23 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode24 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found24 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 24: search one file.
#[tool]
pub async fn tool_24(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode24,
) -> Result<Found24, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 24";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found24 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode25 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found25 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 25: search one file.
#[tool]
pub async fn tool_25(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode25,
) -> Result<Found25, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 25";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found25 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode26 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found26 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 26: search one file.
#[tool]
pub async fn tool_26(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode26,
) -> Result<Found26, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 26";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found26 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode27 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found27 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 27: search one file.
#[tool]
pub async fn tool_27(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode27,
) -> Result<Found27, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 27";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found27 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode28 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found28 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 28: search one file.
#[tool]
pub async fn tool_28(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode28,
) -> Result<Found28, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 28";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found28 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode29 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found29 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 29: search one file.
#[tool]
pub async fn tool_29(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode29,
) -> Result<Found29, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 29";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found29 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode30 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found30 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 30: search one file.
#[tool]
pub async fn tool_30(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode30,
) -> Result<Found30, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 30";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found30 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode31 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found31 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 31: search one file.
#[tool]
pub async fn tool_31(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode31,
) -> Result<Found31, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 31";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found31 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode32 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found32 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 32: search one file.
#[tool]
pub async fn tool_32(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode32,
) -> Result<Found32, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 32";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found32 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode33 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found33 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 33: search one file.
#[tool]
pub async fn tool_33(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode33,
) -> Result<Found33, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 33";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found33 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode34 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found34 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 34: search one file.
#[tool]
pub async fn tool_34(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode34,
) -> Result<Found34, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 34";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found34 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode35 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found35 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 35: search one file.
#[tool]
pub async fn tool_35(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode35,
) -> Result<Found35, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 35";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found35 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode36 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found36 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 36: search one file.
#[tool]
pub async fn tool_36(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode36,
) -> Result<Found36, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 36";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found36 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode37 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found37 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 37: search one file.
#[tool]
pub async fn tool_37(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode37,
) -> Result<Found37, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 37";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found37 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode38 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found38 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 38: search one file.
#[tool]
pub async fn tool_38(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode38,
) -> Result<Found38, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 38";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found38 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode39 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found39 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 39: search one file.
#[tool]
pub async fn tool_39(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode39,
) -> Result<Found39, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 39";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found39 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode40 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found40 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 40: search one file.
#[tool]
pub async fn tool_40(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode40,
) -> Result<Found40, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 40";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found40 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode41 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found41 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 41: search one file.
#[tool]
pub async fn tool_41(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode41,
) -> Result<Found41, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 41";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found41 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode42 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found42 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 42: search one file.
#[tool]
pub async fn tool_42(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode42,
) -> Result<Found42, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 42";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found42 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode43 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found43 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 43: search one file.
#[tool]
pub async fn tool_43(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode43,
) -> Result<Found43, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 43";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found43 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode44 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found44 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 44: search one file.
#[tool]
pub async fn tool_44(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode44,
) -> Result<Found44, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 44";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found44 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode45 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found45 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 45: search one file.
#[tool]
pub async fn tool_45(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode45,
) -> Result<Found45, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 45";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found45 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode46 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found46 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 46: search one file.
#[tool]
pub async fn tool_46(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode46,
) -> Result<Found46, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 46";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found46 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode47 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found47 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 47: search one file.
#[tool]
pub async fn tool_47(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode47,
) -> Result<Found47, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 47";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found47 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode48 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found48 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 48: search one file.
#[tool]
pub async fn tool_48(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode48,
) -> Result<Found48, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 48";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found48 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

/// How the tool matches.
#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode49 { Exact, Prefix, Fuzzy }

/// What the tool found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Found49 {
    /// The path that was searched.
    pub path: String,
    /// Matching lines.
    pub lines: Vec<String>,
    pub total: u64,
    pub truncated: bool,
}

/// Tool number 49: search one file.
#[tool]
pub async fn tool_49(
    /// The file to search.
    path: String,
    /// Most lines to return.
    limit: Option<u32>,
    mode: Mode49,
) -> Result<Found49, String> {
    let _ = mode;
    let marker = "EDIT_MARKER_0 49";
    let n = limit.unwrap_or(10) as u64;
    Ok(Found49 { path, lines: vec![marker.to_owned()], total: n, truncated: false })
}

pub fn all() -> Vec<ToolDefinition> {
    vec![
        tool_0::definition().unwrap(),
        tool_1::definition().unwrap(),
        tool_2::definition().unwrap(),
        tool_3::definition().unwrap(),
        tool_4::definition().unwrap(),
        tool_5::definition().unwrap(),
        tool_6::definition().unwrap(),
        tool_7::definition().unwrap(),
        tool_8::definition().unwrap(),
        tool_9::definition().unwrap(),
        tool_10::definition().unwrap(),
        tool_11::definition().unwrap(),
        tool_12::definition().unwrap(),
        tool_13::definition().unwrap(),
        tool_14::definition().unwrap(),
        tool_15::definition().unwrap(),
        tool_16::definition().unwrap(),
        tool_17::definition().unwrap(),
        tool_18::definition().unwrap(),
        tool_19::definition().unwrap(),
        tool_20::definition().unwrap(),
        tool_21::definition().unwrap(),
        tool_22::definition().unwrap(),
        tool_23::definition().unwrap(),
        tool_24::definition().unwrap(),
        tool_25::definition().unwrap(),
        tool_26::definition().unwrap(),
        tool_27::definition().unwrap(),
        tool_28::definition().unwrap(),
        tool_29::definition().unwrap(),
        tool_30::definition().unwrap(),
        tool_31::definition().unwrap(),
        tool_32::definition().unwrap(),
        tool_33::definition().unwrap(),
        tool_34::definition().unwrap(),
        tool_35::definition().unwrap(),
        tool_36::definition().unwrap(),
        tool_37::definition().unwrap(),
        tool_38::definition().unwrap(),
        tool_39::definition().unwrap(),
        tool_40::definition().unwrap(),
        tool_41::definition().unwrap(),
        tool_42::definition().unwrap(),
        tool_43::definition().unwrap(),
        tool_44::definition().unwrap(),
        tool_45::definition().unwrap(),
        tool_46::definition().unwrap(),
        tool_47::definition().unwrap(),
        tool_48::definition().unwrap(),
        tool_49::definition().unwrap(),
    ]
}
