//! Prints two BuildKit `SysSample`s one second apart and the CPU delta
//! between them, as JSON lines.
//!
//! ```sh
//! cargo run -p stepmon-sysusage --example sys_sample              # live /proc
//! cargo run -p stepmon-sysusage --example sys_sample -- DIR        # a capture directory
//! ```

use std::time::Duration;

use stepmon_sysusage::model::{SysCpuDelta, SysSample};
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
    println!("{}", json(&SysSample::from_reading(&first, None)));
    println!("{}", json(&SysSample::from_reading(&second, Some(&first))));
    if let Some(delta) = SysCpuDelta::between(&first, &second) {
        println!("{}", json(&delta));
    }
    Ok(())
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
