"""One module per export format; each registers one ``kgforge.exports.registry.Format``."""
