//! Prints two BuildKit `SysSample`s one second apart and the CPU delta
//! between them, as JSON lines.
//!
//! ```sh
//! cargo run -p stepmon-sysusage --example sys_sample              # live /proc
//! cargo run -p stepmon-sysusage --example sys_sample -- DIR        # a capture directory
//! ```

use std::time::Duration;

use stepmon_sysusage::probe::SysProbe;

fn main() -> std::io::Result<()> {
    let root = std::env::args().nth(1).unwrap_or_else(|| "/proc".to_string());
    let mut probe = SysProbe::open(&root)?;
    let first = probe.read();
    std::thread::sleep(Duration::from_secs(1));
    let second = probe.read();
    for m in &second.missing {
        eprintln!("missing {} ({}): {}", m.field, m.file, m.reason);
    }
    println!("{}", json(&stepmon_sysusage::model::sys_sample(&first, None)));
    println!("{}", json(&stepmon_sysusage::model::sys_sample(&second, Some(&first))));
    if let Some(delta) = stepmon_sysusage::model::sys_cpu_delta(&first, &second) {
        println!("{}", json(&delta));
    }
    Ok(())
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
