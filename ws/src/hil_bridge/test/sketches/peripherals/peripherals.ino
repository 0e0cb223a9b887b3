// A rover's sketch using the libraries sketches use most: a compass on I2C (Wire), a
// Bluetooth module on a software serial port, its steering trim kept in EEPROM, an
// MCP3008 ADC on SPI for the battery, and the steering servo.
#include <EEPROM.h>
#include <SPI.h>
#include <Servo.h>
#include <SoftwareSerial.h>
#include <Wire.h>

#define COMPASS_ADDRESS 0x1E
#define TRIM_ADDRESS 0
#define ADC_SELECT 7
#define STEERING_PIN 9

SoftwareSerial bluetooth(10, 11);  // RX, TX
Servo steering;
int trim = 0;

void setup() {
  Serial.begin(9600);
  bluetooth.begin(9600);
  Wire.begin();
  SPI.begin();
  pinMode(ADC_SELECT, OUTPUT);
  digitalWrite(ADC_SELECT, HIGH);
  trim = (int8_t)EEPROM.read(TRIM_ADDRESS);
  steering.attach(STEERING_PIN);
  startCompass();
}

void loop() {
  int heading = readHeading();
  steering.write(constrain(90 + trim + (heading - 180) / 4, 0, 180));
  if (bluetooth.available()) {
    char command = bluetooth.read();
    if (command == '+' || command == '-') {
      trim += command == '+' ? 1 : -1;
      EEPROM.update(TRIM_ADDRESS, (byte)trim);
    }
  }
  bluetooth.print(heading);
  bluetooth.print(' ');
  bluetooth.println(readAdc(0));
  delay(100);
}

void startCompass() {
  Wire.beginTransmission(COMPASS_ADDRESS);
  Wire.write(0x02);  // mode register: continuous
  Wire.write(0x00);
  Wire.endTransmission();
}

int readHeading() {
  Wire.beginTransmission(COMPASS_ADDRESS);
  Wire.write(0x03);
  Wire.endTransmission();
  Wire.requestFrom(COMPASS_ADDRESS, 6);
  int x = Wire.read() << 8 | Wire.read();
  Wire.read();
  Wire.read();  // z
  int y = Wire.read() << 8 | Wire.read();
  int degrees = atan2(y, x) * 180 / M_PI;
  return degrees < 0 ? degrees + 360 : degrees;
}

int readAdc(byte channel) {
  SPI.beginTransaction(SPISettings(1000000, MSBFIRST, SPI_MODE0));
  digitalWrite(ADC_SELECT, LOW);
  SPI.transfer(0x01);
  byte high = SPI.transfer(0x80 | channel << 4) & 0x03;
  byte low = SPI.transfer(0x00);
  digitalWrite(ADC_SELECT, HIGH);
  SPI.endTransaction();
  return high << 8 | low;
}
