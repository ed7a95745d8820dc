//! `seglog`: the command-line tool over Kafka-format log directories.

fn main() {
    println!("seglog: not yet");
}
