// FFTW for the DSP module: the planner lock and the delay estimator's complex transform.

import CFFTW
import Synchronization

/// FFTW's planner is not thread-safe (only `fftw_execute*` is): every plan in this module is
/// made and destroyed under this lock.
let fftwPlannerLock = Mutex<Void>(())

/// A complex FFT of one size, in Double, on split real and imaginary arrays, through FFTW.
/// Forward is X_k = Σ x_n·e^{−2πikn/N}; inverse uses e^{+…} without the 1/N. Not for the
/// realtime thread (it copies through its own aligned buffers); one thread at a time.
final class FourierTransform: @unchecked Sendable {
    let size: Int
    private let real: UnsafeMutablePointer<Double>
    private let imaginary: UnsafeMutablePointer<Double>
    private let forwardPlan: OpaquePointer
    private let inversePlan: OpaquePointer

    init(size: Int) {
        precondition(size >= 2, "FFT size must be at least 2")
        self.size = size
        // SAFETY: fftw_malloc returns SIMD-aligned memory of the size asked for (nil only when
        // memory is exhausted, which traps here).
        real = fftw_malloc(size * MemoryLayout<Double>.stride)!.bindMemory(to: Double.self, capacity: size)
        imaginary = fftw_malloc(size * MemoryLayout<Double>.stride)!.bindMemory(to: Double.self, capacity: size)
        real.initialize(repeating: 0, count: size)
        imaginary.initialize(repeating: 0, count: size)
        let re = Int(bitPattern: real), im = Int(bitPattern: imaginary), n = Int32(size)
        // In-place split-array plans on the own buffers. The inverse is the forward transform
        // with the real and imaginary arrays swapped: a plan of its own, because FFTW's new-array
        // execute requires the same ii − ri separation as the plan was made with.
        let addresses = fftwPlannerLock.withLock { _ -> (Int, Int) in
            var dimension = fftw_iodim(n: n, is: 1, os: 1)
            let r = UnsafeMutablePointer<Double>(bitPattern: re), i = UnsafeMutablePointer<Double>(bitPattern: im)
            return (Int(bitPattern: fftw_plan_guru_split_dft(1, &dimension, 0, nil, r, i, r, i, UInt32(FFTW_ESTIMATE))),
                    Int(bitPattern: fftw_plan_guru_split_dft(1, &dimension, 0, nil, i, r, i, r, UInt32(FFTW_ESTIMATE))))
        }
        forwardPlan = OpaquePointer(bitPattern: addresses.0)!
        inversePlan = OpaquePointer(bitPattern: addresses.1)!
    }

    deinit {
        let addresses = (Int(bitPattern: forwardPlan), Int(bitPattern: inversePlan))
        fftwPlannerLock.withLock { _ in
            fftw_destroy_plan(OpaquePointer(bitPattern: addresses.0))
            fftw_destroy_plan(OpaquePointer(bitPattern: addresses.1))
        }
        fftw_free(real)
        fftw_free(imaginary)
    }

    /// Transforms `re`/`im` (`size` values each) in place.
    func transform(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>, inverse: Bool) {
        real.update(from: re, count: size)
        imaginary.update(from: im, count: size)
        fftw_execute(inverse ? inversePlan : forwardPlan)
        re.update(from: real, count: size)
        im.update(from: imaginary, count: size)
    }
}
