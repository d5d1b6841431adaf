// `import Latchkey` brings the engine's public types too (KeychainDatabase, NewItem, ItemQuery, the model):
// one import for users, while the engine stays a module of its own below the service seam.
@_exported public import LatchkeyEngine
// `Certificate` (and later keys and trust) from the PKI module, which the engine uses to derive certificate
// attributes.
@_exported public import LatchkeyPKI
