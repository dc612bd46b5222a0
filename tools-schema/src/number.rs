//! Exact arithmetic on `serde_json::Number` for the numeric keywords.
//!
//! Integers (`i64`/`u64`) are compared exactly through `i128`; anything involving a float is
//! compared as `f64`, except that a float with no fractional part inside the `i128` range is
//! compared exactly against an integer.

use std::cmp::Ordering;

use serde_json::Number;

/// The largest integer up to which every integer is exactly representable as an `f64` (2^53).
pub(crate) const MAX_EXACT_F64_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A number in the form comparisons use.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

#[inline]
pub(crate) fn num(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Compares two numbers by mathematical value. `None` only for NaN, which `serde_json` never
/// produces.
#[inline]
pub(crate) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    // Fast paths for the common representations.
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (a.as_f64(), b.as_f64())
        && x.abs() < MAX_EXACT_F64_INTEGER
        && y.abs() < MAX_EXACT_F64_INTEGER
    {
        // Below 2^53 every integer converts to f64 exactly.
        return x.partial_cmp(&y);
    }
    compare_num(num(a), num(b))
}

#[inline]
pub(crate) fn compare_num(a: Num, b: Num) -> Option<Ordering> {
    const EXACT: i128 = 1 << 53;
    match (a, b) {
        (Num::Int(x), Num::Float(y)) if x.abs() < EXACT => (x as f64).partial_cmp(&y),
        (Num::Float(x), Num::Int(y)) if y.abs() < EXACT => x.partial_cmp(&(y as f64)),
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Int(x), Num::Float(y)) => compare_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => compare_int_float(y, x).map(Ordering::reverse),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
    }
}

fn compare_int_float(x: i128, y: f64) -> Option<Ordering> {
    if y.is_nan() {
        return None;
    }
    // i128 covers every integer serde_json can hold; floats beyond ±2^100 are beyond any i64/u64.
    const LIMIT: f64 = 1.0e30;
    if y >= LIMIT {
        return Some(Ordering::Less);
    }
    if y <= -LIMIT {
        return Some(Ordering::Greater);
    }
    let floor = y.floor();
    // `floor` is integral and within ±1e30, so the cast is exact.
    let fi = floor as i128;
    match x.cmp(&fi) {
        Ordering::Equal if y > floor => Some(Ordering::Less),
        other => Some(other),
    }
}

/// Numeric equality: `1` equals `1.0`.
pub(crate) fn numbers_equal(a: &Number, b: &Number) -> bool {
    compare(a, b) == Some(Ordering::Equal)
}

/// Whether the number has no fractional part (`1.0` counts as an integer, as in JSON Schema).
pub(crate) fn is_integer(n: &Number) -> bool {
    match num(n) {
        Num::Int(_) => true,
        Num::Float(f) => f.is_finite() && f.fract() == 0.0,
    }
}

/// Whether `value` is an integer multiple of `divisor` (`divisor` > 0).
pub(crate) fn is_multiple_of(value: &Number, divisor: &Number) -> bool {
    match (num(value), num(divisor)) {
        (Num::Int(v), Num::Int(d)) if d != 0 => v % d == 0,
        (v, d) => {
            let v = as_f64(v);
            let d = as_f64(d);
            if d == 0.0 || !d.is_finite() {
                return false;
            }
            let q = v / d;
            if !q.is_finite() {
                return false;
            }
            // Tolerate the rounding of decimal fractions such as 0.3 / 0.1, relative to the
            // quotient: a quotient that rounds to zero is a multiple only when it is zero (a tiny
            // value such as 6.6e-161 is not a multiple of 2).
            let nearest = q.round();
            if nearest == 0.0 {
                return q == 0.0;
            }
            (q - nearest).abs() <= 1e-9 * nearest.abs()
        }
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

/// Whether a number may have lost precision when it was parsed: a float with no fractional part
/// whose magnitude is at least 2^53. `serde_json` parses an integer literal outside the
/// `i64`/`u64` range into the nearest `f64`, and from that point the original digits are gone;
/// such a number is not lossless JSON.
pub(crate) fn may_be_lossy(n: &Number) -> bool {
    match num(n) {
        Num::Int(_) => false,
        Num::Float(f) => f.fract() == 0.0 && f.abs() >= MAX_EXACT_F64_INTEGER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(v: serde_json::Value) -> Number {
        match v {
            serde_json::Value::Number(n) => n,
            other => panic!("not a number: {other}"),
        }
    }

    #[test]
    fn compares_across_representations() {
        assert_eq!(compare(&n(json!(1)), &n(json!(1.0))), Some(Ordering::Equal));
        assert_eq!(compare(&n(json!(1)), &n(json!(1.5))), Some(Ordering::Less));
        assert_eq!(
            compare(&n(json!(2)), &n(json!(1.5))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&n(json!(-2)), &n(json!(-1.5))),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&n(json!(u64::MAX)), &n(json!(-1))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&n(json!(u64::MAX)), &n(json!(1e300))),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&n(json!(i64::MIN)), &n(json!(-1e300))),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn integer_and_multiple() {
        assert!(is_integer(&n(json!(3))));
        assert!(is_integer(&n(json!(3.0))));
        assert!(!is_integer(&n(json!(3.5))));
        assert!(is_multiple_of(&n(json!(9)), &n(json!(3))));
        assert!(!is_multiple_of(&n(json!(10)), &n(json!(3))));
        assert!(is_multiple_of(&n(json!(0.3)), &n(json!(0.1))));
        assert!(!is_multiple_of(&n(json!(0.35)), &n(json!(0.1))));
        assert!(is_multiple_of(&n(json!(4.0)), &n(json!(2))));
        // A quotient near zero is not rounded to it (found by the jsonschema agreement property).
        assert!(!is_multiple_of(
            &n(json!(-6.5791868571452385e-161)),
            &n(json!(2))
        ));
        assert!(!is_multiple_of(&n(json!(1e-12)), &n(json!(0.1))));
        assert!(is_multiple_of(&n(json!(0.0)), &n(json!(0.1))));
        assert!(is_multiple_of(&n(json!(-0.0)), &n(json!(2))));
    }

    #[test]
    fn lossy_numbers() {
        let big: serde_json::Value =
            serde_json::from_str("123456789012345678901234567890").unwrap();
        assert!(may_be_lossy(&n(big)));
        assert!(!may_be_lossy(&n(json!(u64::MAX))));
        assert!(!may_be_lossy(&n(json!(1.5))));
    }
}
