// An UNO sketch that greets whoever opens its port, as many do: a banner at boot, then
// it echoes every line and counts the lines it got.
//
// Serial at SERIAL_BAUD (default 57600): "boot <mcusr>" at boot (1 power-on, 2 external
// reset, 8 watchdog), then for each line: "echo <line> <count>"; the line "wdt" makes it
// hang with the watchdog on (15 ms), so the watchdog resets it.
// Written for the tests of the firmware-in-the-loop harness, in the common Arduino style.

#include <avr/wdt.h>

#ifndef SERIAL_BAUD
#define SERIAL_BAUD 57600
#endif

char line[48];
byte used = 0;
unsigned int count = 0;

void setup() {
  byte boot = MCUSR;
  MCUSR = 0;
  wdt_disable();
  Serial.begin(SERIAL_BAUD);
  Serial.print("boot ");
  Serial.println(boot);
}

void loop() {
  while (Serial.available() > 0) {
    char c = Serial.read();
    if (c == '\n' || c == '\r') {
      if (used == 0) {
        continue;
      }
      line[used] = 0;
      used = 0;
      if (strcmp(line, "wdt") == 0) {
        Serial.println("hanging");
        Serial.flush();
        wdt_enable(WDTO_15MS);
        for (;;) {
        }
      }
      count++;
      Serial.print("echo ");
      Serial.print(line);
      Serial.print(' ');
      Serial.println(count);
    } else if (used < sizeof(line) - 1) {
      line[used++] = c;
    }
  }
}
