// A Mega 2560 with its serial devices on the extra hardware UARTs, as robot sketches
// wire them: a Bluetooth module on Serial1 (pins 18/19) at 57600 and a GPS-like NMEA
// talker on Serial2 (pins 16/17) at 9600; Serial (the USB port) prints a line at boot.
//
// Serial1: a banner at boot ("BT ready <boot>"), then every line received is echoed
//   back as "echo <line>"; "burst <n>" answers n bytes 'a'..'z' repeated, then a newline.
// Serial2: once a second (from millis()), a $GPRMC sentence with its checksum, the
//   seconds counting up: $GPRMC,0000SS.00,A,4807.038,N,01131.000,E,000.0,000.0,010125,,,A*hh
// <boot> is the MCU status register at boot (1 power-on, 2 external reset, 8 watchdog).
// Written for the tests of the firmware-in-the-loop harness, in the common Arduino style.

byte boot;
char line[64];
byte used = 0;
unsigned long lastFix = 0;
unsigned int seconds = 0;

void sendNmea(const char *body) {
  byte sum = 0;
  for (const char *c = body; *c; c++) {
    sum ^= *c;
  }
  Serial2.print('$');
  Serial2.print(body);
  Serial2.print('*');
  if (sum < 16) {
    Serial2.print('0');
  }
  Serial2.println(sum, HEX);
}

void setup() {
  boot = MCUSR;
  MCUSR = 0;
  Serial.begin(115200);
  Serial1.begin(57600);
  Serial2.begin(9600);
  Serial.println("mega up");
  Serial1.print("BT ready ");
  Serial1.println(boot);
}

void handle(char *text) {
  if (strncmp(text, "burst ", 6) == 0) {
    int n = atoi(text + 6);
    for (int i = 0; i < n; i++) {
      Serial1.write('a' + i % 26);
    }
    Serial1.println();
  } else {
    Serial1.print("echo ");
    Serial1.println(text);
  }
}

void loop() {
  while (Serial1.available() > 0) {
    char c = Serial1.read();
    if (c == '\n' || c == '\r') {
      if (used > 0) {
        line[used] = 0;
        handle(line);
        used = 0;
      }
    } else if (used < sizeof(line) - 1) {
      line[used++] = c;
    }
  }
  if (millis() - lastFix >= 1000) {
    lastFix += 1000;
    char body[80];
    snprintf(body, sizeof(body), "GPRMC,0000%02u.00,A,4807.038,N,01131.000,E,000.0,000.0,010125,,,A",
             seconds % 60);
    sendNmea(body);
    seconds++;
  }
}
