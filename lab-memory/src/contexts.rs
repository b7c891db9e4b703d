//! `--mode contexts`: the Chinese notes' CUDA context, with the Driver API the labs use (cust binds it).
//! Each host thread has a stack of contexts and works in the one on top. `cuCtxCreate` makes a context
//! and pushes it; `cuCtxPopCurrent` takes it off, and it may then be pushed on another host thread
//! (`cuCtxPushCurrent`) and used there. A context owns its memory and its own copy of every module it
//! loads, `__device__` variables included. The notes' `cuCtxAttach` / `cuCtxDetach` count a
//! context's users; `cuda.h` still has them but says they "should not be used": the primary context's
//! retain and release (`cuDevicePrimaryCtxRetain`, what the runtime API and these labs use) count the
//! users of a context now.

use anyhow::Result;
use common::{check_cuda, raw};
use cust::context::legacy::{Context, ContextFlags, ContextStack, CurrentContext, UnownedContext};
use cust::context::ContextHandle;
use cust::launch;
use cust::memory::{mem_get_info, CopyDestination};
use cust::module::Module;

/// The values each step writes into `devData` and what the last one makes of them.
pub const IN_FIRST: f32 = 1.0;
pub const IN_SECOND: f32 = 2.0;
pub const FACTOR: f32 = 3.0;

/// What the walk through the stack saw: `devData` of each context where the notes' reasoning says
/// what it must be, and the memory the second context took.
#[derive(Debug, Clone, PartialEq)]
pub struct Walk {
    /// The lab's (primary) context's `devData` after the second context wrote its own.
    pub first_after: f32,
    /// The second context's `devData` as another host thread found it after the push there.
    pub second_on_thread: f32,
    /// The second context's `devData` back on this thread, after that thread's kernel.
    pub second_after: f32,
    /// Whether each step found the context it expected on top of the stack.
    pub stack_as_expected: bool,
    /// `cuCtxAttach` then `cuCtxDetach` on the second context: whether attach handed back the context
    /// on top and the context lived on after the detach; the driver's error where it refused attach.
    pub attach_detach: std::result::Result<bool, String>,
    /// Device memory the second context and its module took (free before minus free after), bytes.
    pub context_bytes: i64,
}

impl Walk {
    /// Whether every value is the one the notes' model predicts.
    pub fn right(&self) -> bool {
        self.first_after == IN_FIRST
            && self.second_on_thread == IN_SECOND
            && self.second_after == IN_SECOND * FACTOR
            && self.stack_as_expected
            && self.attach_detach != Ok(false)
    }
}

/// `devData` of `module`, which must belong to the current context.
fn read_dev_data(module: &Module) -> Result<f32> {
    let symbol = check_cuda!(module.get_global::<f32>(c"devData"))?;
    let mut value = 0.0f32;
    check_cuda!(symbol.copy_to(&mut value))?;
    Ok(value)
}

fn write_dev_data(module: &Module, value: f32) -> Result<()> {
    let mut symbol = check_cuda!(module.get_global::<f32>(c"devData"))?;
    Ok(check_cuda!(symbol.copy_from(&value))?)
}

/// Whether `context` is the one on top of this thread's stack.
fn on_top(context: &impl ContextHandle) -> Result<bool> {
    Ok(check_cuda!(CurrentContext::get_current())?.get_inner() == context.get_inner())
}

/// The walk, printing each call and the context on top after it. `module` is memory.cu loaded in the
/// lab's context, which must be current.
pub fn walk(module: &Module) -> Result<Walk> {
    let first = check_cuda!(CurrentContext::get_current())?;
    let name = |context: &UnownedContext| {
        if context.get_inner() == first.get_inner() {
            "the lab's (primary) context"
        } else {
            "the second context"
        }
    };
    let print = |call: &str| -> Result<()> {
        let top = check_cuda!(CurrentContext::get_current())?;
        println!("| {call} | {} | {:p} |", name(&top), top.get_inner());
        Ok(())
    };
    println!("| call | on top of this thread's stack | handle |");
    println!("|------|-------------------------------|--------|");
    print("(the lab's start) cuDevicePrimaryCtxRetain, cuCtxSetCurrent")?;
    write_dev_data(module, IN_FIRST)?;
    let free_before = check_cuda!(mem_get_info())?.0;
    let device = check_cuda!(CurrentContext::get_device())?;
    let second = check_cuda!(Context::create_and_push(ContextFlags::SCHED_AUTO, device))?;
    print("cuCtxCreate: the new context is pushed")?;
    let mut stack_as_expected = on_top(&second)?;
    let attach_detach = attach_and_detach(&second, print)?;
    // The second context's own copy of memory.cu, loaded while it is current.
    let second_module = common::gpu::load_image(&kernels::MEMORY)?;
    write_dev_data(&second_module, IN_SECOND)?;
    let context_bytes = free_before as i64 - check_cuda!(mem_get_info())?.0 as i64;
    let popped = check_cuda!(ContextStack::pop())?;
    print("cuCtxPopCurrent: the lab's context is on top again")?;
    stack_as_expected &= on_top(&first)? && popped.get_inner() == second.get_inner();
    // Between this pop and the push back below, `second_module` belongs to a context that is not
    // current here: whatever happens there, the push comes next, so that the module is unloaded in
    // its own context.
    let away = (|| -> Result<(f32, f32, bool)> {
        let first_after = read_dev_data(module)?;
        let (second_on_thread, thread_stack) = on_another_thread(&popped, &second_module)?;
        Ok((first_after, second_on_thread, thread_stack))
    })();
    check_cuda!(ContextStack::push(&popped))?;
    print("cuCtxPushCurrent: the second context, back on this thread")?;
    let (first_after, second_on_thread, thread_stack) = away?;
    stack_as_expected &= thread_stack;
    let second_after = read_dev_data(&second_module)?;
    drop(second_module);
    check_cuda!(ContextStack::pop())?;
    check_cuda!(Context::drop(second).map_err(|(error, _)| error))?;
    print("cuCtxPopCurrent, cuCtxDestroy")?;
    stack_as_expected &= on_top(&first)?;
    Ok(Walk {
        first_after,
        second_on_thread,
        second_after,
        stack_as_expected,
        attach_detach,
        context_bytes,
    })
}

/// The popped `context` floats: another host thread pushes it, reads `module`'s devData there, runs
/// `scale_symbols(FACTOR)` and pops it. Returns the value read and whether the context was on top
/// of that thread's stack.
fn on_another_thread(context: &UnownedContext, module: &Module) -> Result<(f32, bool)> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<(f32, bool)> {
                check_cuda!(ContextStack::push(context))?;
                println!(
                    "| (another host thread) cuCtxPushCurrent | the second context | {:p} |",
                    context.get_inner()
                );
                let on_this_thread = on_top(context)?;
                let value = read_dev_data(module)?;
                let scale = check_cuda!(module.get_function("scale_symbols"))?;
                let stream = crate::new_stream()?;
                // __global__ void scale_symbols(float factor)
                // SAFETY: one float, as the kernel takes; it writes only its module's own symbols, in
                // the second context, current on this thread.
                check_cuda!(unsafe { launch!(scale<<<1, crate::symbols::SYMBOL_LENGTH as u32, 0, stream>>>(FACTOR)) })?;
                check_cuda!(stream.synchronize())?;
                drop(stream);
                check_cuda!(ContextStack::pop())?;
                println!("| (another host thread) scale_symbols<<<1, 256>>>, cuCtxPopCurrent | (none) | |");
                Ok((value, on_this_thread))
            })
            .join()
            .map_err(|_| anyhow::anyhow!("the host thread that used the second context panicked"))?
    })
}

/// The notes' usage count: `cuCtxAttach` on `context`, which must be current (1 to 2), then
/// `cuCtxDetach` (2 to 1: the context must live on). Whether attach handed back `context` and it was
/// still on top after the detach; the driver's error if it refused the attach.
fn attach_and_detach(
    context: &Context,
    print: impl Fn(&str) -> Result<()>,
) -> Result<std::result::Result<bool, String>> {
    let mut attached: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: the driver writes the current context's handle into `attached`, or fails.
    if let Err(error) = check_cuda!(unsafe { raw::cuCtxAttach(&mut attached, 0) }) {
        println!("| cuCtxAttach: {error} | | |");
        return Ok(Err(error.to_string()));
    }
    print("cuCtxAttach: its usage count 1 -> 2")?;
    let same = attached == context.get_inner().cast();
    // SAFETY: `attached` is the current context, whose count the attach above raised to 2: the detach
    // takes it back to 1 and destroys nothing.
    check_cuda!(unsafe { raw::cuCtxDetach(attached) })?;
    print("cuCtxDetach: 2 -> 1, the context lives on")?;
    Ok(Ok(same && on_top(context)?))
}

/// `--mode contexts`: the walk, then what each context's devData held. Returns whether all was as the
/// notes' model says.
pub fn report(module: &Module) -> Result<bool> {
    println!("\nContexts: the lab's context writes devData = {IN_FIRST}; a second context on the same GPU loads memory.cu again and writes its own devData = {IN_SECOND}\n");
    let walk = walk(module)?;
    println!(
        "\ndevData in the lab's context after the second wrote its own: {} (expected {IN_FIRST}: a module's globals belong to the context that loaded it)",
        walk.first_after
    );
    println!(
        "devData in the second context, read on another host thread: {} (expected {IN_SECOND}); after that thread's scale_symbols({FACTOR}): {} (expected {})",
        walk.second_on_thread,
        walk.second_after,
        IN_SECOND * FACTOR
    );
    println!(
        "The second context and its module took {:.1} MiB of device memory. cuCtxAttach / cuCtxDetach: {}; cuda.h calls them deprecated, and cuDevicePrimaryCtxRetain / Release count a context's users now.",
        walk.context_bytes as f64 / (1 << 20) as f64,
        match &walk.attach_detach {
            Ok(true) => "attach handed back the second context, and after the detach it was still there".to_string(),
            Ok(false) => "attach handed back another context, or the detach took the context away".to_string(),
            Err(error) => format!("this driver refused the attach ({error})"),
        }
    );
    println!("Contexts: {}", if walk.right() { "PASS" } else { "FAIL" });
    Ok(walk.right())
}
