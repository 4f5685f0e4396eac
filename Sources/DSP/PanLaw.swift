/// Output gains for playback (`micmon play --volume V --pan P`).
///
/// - A mono file is panned with the constant-power law: θ = (P + 1)·π/4, left = cos θ,
///   right = sin θ. At P = 0 both sides get −3.01 dB, at P = ±1 one side gets everything, and
///   left² + right² = 1 everywhere, so the loudness stays put while the image moves.
/// - A stereo file is balanced: P < 0 turns the right channel down linearly (× (1 + P)), P > 0
///   the left (× (1 − P)); at P = 0 both are untouched, so centre pan at volume 1 is bit-exact.
///
/// Volume (0…1) multiplies both. Any thread (not needed on the realtime one: compute once).
public struct PanLaw: Sendable, Equatable {
    public let left: Float
    public let right: Float

    public init(volume: Double, pan: Double, sourceChannels: Int) {
        if sourceChannels == 1 {
            let theta = (pan + 1) * Double.pi / 4
            left = Float(volume * DSPMath.cos(theta))
            right = Float(volume * DSPMath.sin(theta))
        } else {
            left = Float(volume * (pan > 0 ? 1 - pan : 1))
            right = Float(volume * (pan < 0 ? 1 + pan : 1))
        }
    }
}
