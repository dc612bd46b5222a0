//! Programs more than one test module runs: written once here.

/// Patches every built-in a JSON conversion could consult, on prototypes and globals.
pub const PATCH_EVERYTHING: &str = r#"
    const P: any = Object.prototype, A: any = Array.prototype;
    P.toJSON = function () { return "toJSON of an object"; };
    Object.defineProperty(A, "toJSON", { get() { return () => "toJSON of an array"; }, configurable: true });
    Object.defineProperty(P, "parent", { get() { return null; }, configurable: true });
    Object.defineProperty(A, "1", { get() { return "index from the prototype"; }, set(_v) {}, configurable: true });
    // Last: once these exist, every descriptor literal inherits them.
    Object.defineProperty(P, "get", { get() { return () => "get from the prototype"; }, configurable: true });
    Object.defineProperty(P, "value", { get() { return "value from the prototype"; }, configurable: true });
    A.push = function () { throw new Error("push was called"); };
    A.pop = function () { throw new Error("pop was called"); };
    A.slice = function () { throw new Error("slice was called"); };
    (Set.prototype as any).has = () => true;
    (Set.prototype as any).add = function () { throw new Error("add was called"); };
    (String.prototype as any).slice = () => "sliced";
    (Map.prototype as any).set = function () { throw new Error("map set was called"); };
    (Map.prototype as any).delete = () => true;
    (Map.prototype as any).forEach = () => undefined;
    (Map.prototype as any).values = () => [][Symbol.iterator]();
    Array.isArray = () => false;
    Object.keys = () => ["forged"];
    (Object as any).entries = () => [["forged", 1]];
    Object.getPrototypeOf = () => null;
    Object.getOwnPropertyDescriptor = () => ({ value: "forged" });
    JSON.stringify = () => '"forged"';
    JSON.parse = () => "forged";
"#;

/// Patches every function of the `json` module (and its encoder's helpers) a conversion could
/// use: a conversion that called one would send or return something forged.
pub const PATCH_JSON: &str = "import json, json.encoder, json.decoder
json.dumps = lambda *a, **k: '\"forged\"'
json.loads = lambda *a, **k: 'forged'
json.JSONEncoder = None
json.JSONDecoder = None
json.encoder.encode_basestring = lambda s: '\"forged\"'
json.encoder.encode_basestring_ascii = lambda s: '\"forged\"'
json.encoder.c_make_encoder = None
json.encoder.float = None
json._default_decoder = None
";
